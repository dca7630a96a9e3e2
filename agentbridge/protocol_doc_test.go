package agentbridge_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/agentbridge/approvertest"
	"github.com/agentgate/agentgate/agentbridge/bridgetest"
)

// docProjectRoot is the project root the documented session uses.
const docProjectRoot = "/home/ann/src/shop"

// learnedKeys hold ids the bridge chooses: the documented value is mapped
// to the real one, and later requests and responses use the real one.
var learnedKeys = map[string]bool{"session": true, "run_id": true}

// ignoredKeys hold values that depend on the machine or the moment.
// (whether the change summary is still pending depends on the moment too).
var ignoredKeys = map[string]bool{"executable": true, "file": true, "proposed_at": true, "changes": true, "changes_pending": true}

// TestProtocolDocExampleReplays parses the example session out of
// docs/protocol.md and replays it against a real bridge, comparing every
// response modulo ids, times and machine-dependent paths.
func TestProtocolDocExampleReplays(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	exchanges := parseExample(t, string(doc))
	if len(exchanges) < 8 {
		t.Fatalf("the example session has only %d exchanges", len(exchanges))
	}
	b := bridgetest.Start(t, bridgetest.Options{Steps: []approvertest.Step{approvertest.Deny("please run the tests through make test")}})
	b.Allow(t, "echo")
	c := dialRaw(t, b)
	mapping := map[string]string{docProjectRoot: b.Project}
	for i, ex := range exchanges {
		c.send(substitute(ex.request, mapping))
		resp := c.recv()
		got, _ := json.Marshal(resp)
		var want, actual any
		if err := json.Unmarshal([]byte(substitute(ex.response, mapping)), &want); err != nil {
			t.Fatalf("exchange %d: the documented response is not JSON: %v", i+1, err)
		}
		json.Unmarshal(got, &actual)
		t.Logf("← %s", got)
		if diff := compare("", want, actual, mapping); diff != "" {
			t.Fatalf("exchange %d (%s):\n%s\ndocumented: %s\nactual:     %s", i+1, ex.request, diff, ex.response, got)
		}
	}
}

// exchange is one documented request and its response.
type exchange struct{ request, response string }

// parseExample extracts the → / ← lines of the "Example session" block.
func parseExample(t *testing.T, doc string) []exchange {
	_, after, ok := strings.Cut(doc, "## Example session")
	if !ok {
		t.Fatal("docs/protocol.md has no \"## Example session\" section")
	}
	_, block, _ := strings.Cut(after, "```jsonl\n")
	block, _, _ = strings.Cut(block, "```")
	var out []exchange
	for _, line := range strings.Split(block, "\n") {
		switch {
		case strings.HasPrefix(line, "→ "):
			out = append(out, exchange{request: strings.TrimPrefix(line, "→ ")})
		case strings.HasPrefix(line, "← "):
			if len(out) == 0 || out[len(out)-1].response != "" {
				t.Fatalf("a response without its request: %s", line)
			}
			out[len(out)-1].response = strings.TrimPrefix(line, "← ")
		}
	}
	return out
}

// substitute replaces documented values with the real ones.
func substitute(s string, mapping map[string]string) string {
	for from, to := range mapping {
		s = strings.ReplaceAll(s, from, to)
	}
	return s
}

// compare returns "" when actual matches want, learning ids on the way.
func compare(key string, want, actual any, mapping map[string]string) string {
	if ignoredKeys[key] {
		return ""
	}
	if learnedKeys[key] {
		ws, ok1 := want.(string)
		as, ok2 := actual.(string)
		if !ok1 || !ok2 || as == "" {
			return key + ": want an id, got " + jsonText(actual)
		}
		if ws != as {
			if prev, seen := mapping[ws]; seen && prev != as {
				return key + ": " + ws + " was " + prev + ", now " + as
			}
			mapping[ws] = as
		}
		return ""
	}
	wm, ok1 := want.(map[string]any)
	am, ok2 := actual.(map[string]any)
	if ok1 && ok2 {
		for k := range wm {
			if _, ok := am[k]; !ok && !ignoredKeys[k] {
				return "missing " + k
			}
		}
		for k := range am {
			if _, ok := wm[k]; !ok && !ignoredKeys[k] {
				return "undocumented " + k + " = " + jsonText(am[k])
			}
		}
		for k := range wm {
			if d := compare(k, wm[k], am[k], mapping); d != "" {
				return k + "." + d
			}
		}
		return ""
	}
	wl, ok1 := want.([]any)
	al, ok2 := actual.([]any)
	if ok1 && ok2 {
		if len(wl) != len(al) {
			return "length " + jsonText(len(wl)) + " vs " + jsonText(len(al))
		}
		for i := range wl {
			if d := compare(key, wl[i], al[i], mapping); d != "" {
				return "[" + jsonText(i) + "]" + d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(want, actual) {
		return ": want " + jsonText(want) + ", got " + jsonText(actual)
	}
	return ""
}

// jsonText renders v as JSON.
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
