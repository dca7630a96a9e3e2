package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/agentgate/agentgate/cli/hook"
)

// codexHookEvents are the Codex hook events `agentgate setup codex` wires,
// with the label Codex uses for each in hook trust keys. PreToolUse decides
// every shell command; PermissionRequest, fired only when Codex is about to
// show its own prompt, lets a rule-allowed command through without that
// prompt.
var codexHookEvents = []struct{ event, label string }{
	{"PreToolUse", "pre_tool_use"},
	{"PermissionRequest", "permission_request"},
}

// codexDefaultTimeout is the hook timeout Codex assumes when a handler
// names none, in seconds.
const codexDefaultTimeout = 600

// codexHandler is one command hook handler found in a Codex config.toml.
type codexHandler struct {
	// Event is the hook event (PreToolUse, PermissionRequest).
	Event string
	// Label is the event's trust-key label (pre_tool_use, …).
	Label string
	// Group and Index locate the handler: the Group-th matcher group of the
	// event in this file, the Index-th handler in it.
	Group, Index int
	// Matcher is the group's matcher, nil when it has none.
	Matcher *string
	// Command is the handler's command.
	Command string
	// Timeout is the handler's timeout in seconds as Codex normalises it
	// (600 when absent, at least 1).
	Timeout int64
	// Async is the handler's async flag.
	Async bool
	// StatusMessage is the handler's statusMessage, nil when absent.
	StatusMessage *string
	// Unknown lists handler keys whose effect on Codex's trust hash is not
	// known here; with any, the hash cannot be computed.
	Unknown []string
}

// trustKey is the key of the handler's [hooks.state."…"] table in Codex's
// config: "<config file>:<event label>:<group>:<index>".
func (h codexHandler) trustKey(file string) string {
	return fmt.Sprintf("%s:%s:%d:%d", file, h.Label, h.Group, h.Index)
}

// trustedHash is the hash Codex compares a handler's trusted_hash with, as
// codex-rs/hooks/src/engine/discovery.rs computes it (Codex 0.169.0): the
// identity {event_name, matcher, hooks: [the normalised handler]} turned
// into TOML (absent values dropped), then JSON with every object's keys
// sorted, serialised compactly by serde_json, hashed with SHA-256:
// "sha256:<hex>". The normalised handler has type, command, timeout
// (default 600), async and, when set, statusMessage.
func (h codexHandler) trustedHash() string {
	var b strings.Builder
	b.WriteString(`{"event_name":`)
	b.WriteString(serdeJSONString(h.Label))
	b.WriteString(`,"hooks":[{"async":`)
	b.WriteString(strconv.FormatBool(h.Async))
	b.WriteString(`,"command":`)
	b.WriteString(serdeJSONString(h.Command))
	if h.StatusMessage != nil {
		b.WriteString(`,"statusMessage":`)
		b.WriteString(serdeJSONString(*h.StatusMessage))
	}
	b.WriteString(`,"timeout":`)
	b.WriteString(strconv.FormatInt(h.Timeout, 10))
	b.WriteString(`,"type":"command"}]`)
	if h.Matcher != nil {
		b.WriteString(`,"matcher":`)
		b.WriteString(serdeJSONString(*h.Matcher))
	}
	b.WriteString(`}`)
	sum := sha256.Sum256([]byte(b.String()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// serdeJSONString returns s as serde_json writes a string: `"` and `\`
// escaped with a backslash, \b \t \n \f \r short, other control characters
// below 0x20 as \u00xx (lower-case hex), everything else — DEL and
// non-ASCII included — as is.
func serdeJSONString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if c < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// codexConfig is the part of Codex's config.toml setup reads.
type codexConfig struct {
	// hooks maps an event name to its matcher groups.
	hooks map[string][]map[string]any
	// state maps a trust key to its [hooks.state."…"] table.
	state map[string]map[string]any
	// hooksOff names the feature flag that switches Codex's hooks off
	// (features.hooks or its deprecated name features.codex_hooks set to
	// false; "" when none does).
	hooksOff string
}

// codexHooksFeatures are the feature flags that switch Codex's hooks on and
// off: hooks, and its deprecated name codex_hooks (Codex 0.169.0 honours
// both).
var codexHooksFeatures = []string{"hooks", "codex_hooks"}

// readCodexConfig decodes a Codex config.toml (empty input is an empty
// config).
func readCodexConfig(data []byte) (codexConfig, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return codexConfig{}, fmt.Errorf("the file is not valid TOML: %v", err)
	}
	cfg := codexConfig{hooks: map[string][]map[string]any{}, state: map[string]map[string]any{}}
	hooks, _ := doc["hooks"].(map[string]any)
	for key, v := range hooks {
		if key == "state" {
			states, _ := v.(map[string]any)
			for k, s := range states {
				if t, ok := s.(map[string]any); ok {
					cfg.state[k] = t
				}
			}
			continue
		}
		groups, _ := v.([]map[string]any)
		cfg.hooks[key] = groups
	}
	if features, ok := doc["features"].(map[string]any); ok {
		for _, name := range codexHooksFeatures {
			if features[name] == false {
				cfg.hooksOff = "features." + name
			}
		}
	}
	return cfg, nil
}

// agentgateHandlers returns the handlers of the wired events that run
// agentgate's Codex hook, in file order.
func (cfg codexConfig) agentgateHandlers() []codexHandler {
	var out []codexHandler
	for _, ev := range codexHookEvents {
		for gi, group := range cfg.hooks[ev.event] {
			var matcher *string
			if m, ok := group["matcher"].(string); ok {
				matcher = &m
			}
			handlers, _ := group["hooks"].([]map[string]any)
			for hi, handler := range handlers {
				command, _ := handler["command"].(string)
				if handler["type"] != "command" || !isAgentgateHook(command, hook.Codex) {
					continue
				}
				h := codexHandler{Event: ev.event, Label: ev.label, Group: gi, Index: hi, Matcher: matcher,
					Command: command, Timeout: codexDefaultTimeout}
				for key, v := range handler {
					switch key {
					case "type", "command":
					case "timeout":
						if n, ok := v.(int64); ok {
							h.Timeout = max(n, 1)
						} else {
							h.Unknown = append(h.Unknown, key)
						}
					case "async":
						h.Async, _ = v.(bool)
					case "statusMessage":
						if s, ok := v.(string); ok {
							h.StatusMessage = &s
						}
					default:
						h.Unknown = append(h.Unknown, key)
					}
				}
				out = append(out, h)
			}
		}
	}
	return out
}

// codexHookEdit wires agentgate's hook into a Codex config.toml (old, at
// file) with command, and records the person's trust of it the way Codex
// stores trust, so that Codex runs it (Codex skips a hook nobody trusted:
// `codex exec` silently, the TUI after asking):
//
//  1. a handler that runs another agentgate's Codex hook (a moved binary,
//     or the other of `agentgate hook codex` and `agentgate-hook codex`)
//     gets command instead, on its own line;
//  2. each event of codexHookEvents without an agentgate handler gets a
//     matcher group for Bash with one handler (type, command, timeout),
//     appended at the end of the file;
//  3. every agentgate handler gets [hooks.state."<file>:<event>:<group>:
//     <index>"] trusted_hash = the hash Codex computes for it, replacing a
//     stale one in place, and loses an `enabled = false` there;
//  4. features.hooks (or its old name features.codex_hooks) set to false,
//     which switches every hook off, becomes true.
//
// The rest of the file is kept byte for byte. It fails when the file is not
// valid TOML, when the result would not be (hooks written in another form
// than tables), or when a handler has keys whose effect on the hash is not
// known. done is true when nothing needs changing.
func codexHookEdit(old []byte, file, command string) (updated []byte, done bool, err error) {
	cfg, err := readCodexConfig(old)
	if err != nil {
		return nil, false, err
	}
	text := string(old)
	// 1. Another agentgate's hook command becomes this one.
	for _, h := range cfg.agentgateHandlers() {
		if h.Command != command {
			text = replaceTOMLValueLines(text, "command", h.Command, tomlString(command))
		}
	}
	if cfg, err = readCodexConfig([]byte(text)); err != nil {
		return nil, false, err
	}
	// 2. Missing events get a group of their own.
	wired := map[string]bool{}
	for _, h := range cfg.agentgateHandlers() {
		wired[h.Event] = true
	}
	var add strings.Builder
	for _, ev := range codexHookEvents {
		if wired[ev.event] {
			continue
		}
		if add.Len() == 0 {
			add.WriteString("# Added by `agentgate setup codex`: agentgate decides before Codex runs a shell command.\n")
		} else {
			add.WriteString("\n")
		}
		fmt.Fprintf(&add, "[[hooks.%s]]\nmatcher = \"Bash\"\n\n[[hooks.%s.hooks]]\ntype = \"command\"\n", ev.event, ev.event)
		fmt.Fprintf(&add, "command = %s\ntimeout = %d\n", tomlString(command), setupHookTimeout)
	}
	if add.Len() > 0 {
		text = appendTOMLBlock(text, add.String())
		if cfg, err = readCodexConfig([]byte(text)); err != nil {
			return nil, false, fmt.Errorf("adding the hook tables would break the file (are hooks written in another form?): %v", err)
		}
	}
	// 3. Trust, as Codex records it.
	for _, h := range cfg.agentgateHandlers() {
		if len(h.Unknown) > 0 {
			return nil, false, fmt.Errorf("the agentgate hook for %s carries settings whose effect on Codex's trust is unknown (%s); remove them, or trust the hook in Codex itself (it asks at start)",
				h.Event, strings.Join(h.Unknown, ", "))
		}
		key, hash := h.trustKey(file), h.trustedHash()
		state := cfg.state[key]
		if state["trusted_hash"] == hash && state["enabled"] != false {
			continue
		}
		if text, err = upsertCodexTrust(text, key, hash); err != nil {
			return nil, false, err
		}
		check, err := readCodexConfig([]byte(text))
		if err != nil || check.state[key]["trusted_hash"] != hash || check.state[key]["enabled"] == false {
			return nil, false, fmt.Errorf("recording Codex's trust of the hook failed (the file holds [hooks.state] in a form setup cannot edit); trust the hook in Codex itself (it asks at start)")
		}
	}
	// 4. Hooks switched off by a feature flag in this file are switched on.
	if cfg.hooksOff != "" {
		text = enableCodexHooks(text)
		if check, err := readCodexConfig([]byte(text)); err != nil || check.hooksOff != "" {
			return nil, false, fmt.Errorf("%s is false in the file and setup cannot change it there; set it to true by hand", cfg.hooksOff)
		}
	}
	if text == string(old) {
		return old, true, nil
	}
	return []byte(text), false, nil
}

// enableCodexHooks sets every `hooks = false` or `codex_hooks = false` of
// the [features] table (or a dotted features.… key at the top level) to
// true, keeping the line's indentation.
func enableCodexHooks(text string) string {
	lines := strings.SplitAfter(text, "\n")
	var table []string
	for i, line := range lines {
		k, isTable, ok := tomlLineKey(line)
		if !ok {
			continue
		}
		if isTable {
			table = k
			continue
		}
		full := append(append([]string(nil), table...), k...)
		if len(full) != 2 || full[0] != "features" || !slices.Contains(codexHooksFeatures, full[1]) {
			continue
		}
		name, value, _ := strings.Cut(line, "=")
		if strings.TrimSpace(strings.SplitN(value, "#", 2)[0]) != "false" {
			continue
		}
		nl := ""
		if strings.HasSuffix(line, "\n") {
			nl = "\n"
		}
		lines[i] = strings.TrimRight(name, " \t") + " = true" + nl
	}
	return strings.Join(lines, "")
}

// appendTOMLBlock appends block to text after a blank line.
func appendTOMLBlock(text, block string) string {
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if text != "" {
		text += "\n"
	}
	return text + block
}

// tomlLineKey returns the dotted key a TOML line assigns, or the key path a
// table header line names (table true), decoding the line alone; ok is
// false for any other line (blank, comment, a line inside a multi-line
// value that does not decode on its own).
func tomlLineKey(line string) (key []string, table, ok bool) {
	trimmed := strings.TrimSpace(line)
	if trimmed == "" || trimmed[0] == '#' {
		return nil, false, false
	}
	var v map[string]any
	md, err := toml.Decode(trimmed, &v)
	if err != nil {
		return nil, false, false
	}
	keys := md.Keys()
	if len(keys) == 0 {
		return nil, false, false
	}
	last := keys[len(keys)-1]
	return []string(last), strings.HasPrefix(trimmed, "["), true
}

// replaceTOMLValueLines replaces every line assigning key (a bare key in
// its table) the string value from with `key = to`, keeping the line's
// indentation.
func replaceTOMLValueLines(text, key, from, to string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, line := range lines {
		k, table, ok := tomlLineKey(line)
		if !ok || table || len(k) != 1 || k[0] != key {
			continue
		}
		name, value, _ := strings.Cut(strings.TrimSpace(line), "=")
		if s, ok := parseTOMLString(strings.TrimSpace(value)); !ok || s != from || strings.TrimSpace(name) != key {
			continue
		}
		indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
		nl := ""
		if strings.HasSuffix(line, "\n") {
			nl = "\n"
		}
		lines[i] = indent + key + " = " + to + nl
	}
	return strings.Join(lines, "")
}

// upsertCodexTrust sets trusted_hash = hash in the table
// [hooks.state."key"] of a Codex config: in place when the table exists
// (replacing its trusted_hash line and dropping an `enabled = false`
// line), else as a new table at the end.
func upsertCodexTrust(text, key, hash string) (string, error) {
	lines := strings.SplitAfter(text, "\n")
	header := -1
	for i, line := range lines {
		k, table, ok := tomlLineKey(line)
		if ok && table && len(k) == 3 && k[0] == "hooks" && k[1] == "state" && k[2] == key {
			header = i
			break
		}
	}
	hashLine := "trusted_hash = " + tomlString(hash) + "\n"
	if header < 0 {
		block := "# Trusted by the person at `agentgate setup codex`'s prompt: Codex runs this hook without asking again.\n" +
			"[hooks.state." + tomlString(key) + "]\n" + hashLine
		return appendTOMLBlock(text, block), nil
	}
	out := append([]string(nil), lines[:header+1]...)
	if !strings.HasSuffix(out[header], "\n") {
		out[header] += "\n"
	}
	wrote := false
	i := header + 1
	for ; i < len(lines); i++ {
		k, table, ok := tomlLineKey(lines[i])
		if ok && table {
			break
		}
		switch {
		case ok && len(k) == 1 && k[0] == "trusted_hash":
			if !wrote {
				out = append(out, hashLine)
				wrote = true
			}
		case ok && len(k) == 1 && k[0] == "enabled" && strings.Contains(lines[i], "false"):
			// The hook was switched off in Codex; setup switches it on.
		default:
			out = append(out, lines[i])
		}
	}
	if !wrote {
		out = append(out[:header+1], append([]string{hashLine}, out[header+1:]...)...)
	}
	return strings.Join(append(out, lines[i:]...), ""), nil
}
