package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// jsonPath joins keys into a gjson/sjson path, escaping the characters those
// paths treat specially.
func jsonPath(keys ...string) string {
	esc := make([]string, len(keys))
	for i, k := range keys {
		esc[i] = gjson.Escape(k)
	}
	return strings.Join(esc, ".")
}

// jsonInsert adds value to the JSON document doc without touching any other
// byte: existing keys keep their order, formatting and comments-free layout.
//
// With appendArray, path names an array and value is appended to it; a
// missing array (and any missing object above it) is created holding just
// value. Without appendArray, path names an object member that must not exist
// yet; it is created with value (and any missing object above it).
//
// The inserted text follows the surrounding style: in a multi-line container
// it goes on new lines, indented one unit (the file's first indentation, two
// spaces by default) deeper than the container's line; in a one-line
// container it is written compactly. It fails when doc is not valid JSON or
// when something on the path is not an object (or, for the last element with
// appendArray, not an array).
func jsonInsert(doc []byte, path []string, value any, appendArray bool) ([]byte, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = []byte("{}\n")
	}
	if !gjson.ValidBytes(doc) {
		return nil, fmt.Errorf("the file is not plain JSON (comments or a syntax error?)")
	}
	// Find the deepest existing container on the path.
	depth := len(path)
	var container gjson.Result
	for ; depth >= 0; depth-- {
		if depth == 0 {
			trimmed := bytes.TrimSpace(doc)
			container = gjson.ParseBytes(trimmed)
			container.Raw = string(trimmed)
			container.Index = bytes.Index(doc, trimmed)
			break
		}
		if r := gjson.GetBytes(doc, jsonPath(path[:depth]...)); r.Exists() {
			container = r
			break
		}
	}
	if depth == len(path) && !appendArray {
		return nil, fmt.Errorf("%s already exists", strings.Join(path, "."))
	}
	wantArray := depth == len(path)
	switch {
	case wantArray && !container.IsArray():
		return nil, fmt.Errorf("%s is not a list", strings.Join(path, "."))
	case !wantArray && !container.IsObject():
		where := strings.Join(path[:depth], ".")
		if where == "" {
			where = "the top level"
		}
		return nil, fmt.Errorf("%s is not an object", where)
	}
	if container.Index < 0 || container.Index+len(container.Raw) > len(doc) {
		return nil, fmt.Errorf("cannot locate %s in the file", strings.Join(path[:depth], "."))
	}
	// Build what to insert: an array element, or a new key whose value nests
	// the rest of the path.
	member := value
	if !wantArray {
		if appendArray {
			member = []any{value}
		}
		for j := len(path) - 1; j > depth; j-- {
			member = map[string]any{path[j]: member}
		}
	}
	start := container.Index
	end := start + len(container.Raw) - 1 // the closing } or ]
	inner := doc[start+1 : end]
	empty := len(bytes.TrimSpace(inner)) == 0
	multiline := bytes.Contains([]byte(container.Raw), []byte("\n")) || (empty && bytes.Contains(doc, []byte("\n")))
	lineIndent := indentOfLine(doc, start)
	unit := indentUnit(doc)

	// A multi-line container gets the member on a line of its own, indented
	// one unit deeper than the container's line; a one-line one inline.
	prefix, indent, sep := "", "", " "
	if multiline {
		prefix, indent, sep = lineIndent+unit, unit, "\n"+lineIndent+unit
	}
	encoded, err := marshalIndented(member, prefix, indent)
	if err != nil {
		return nil, err
	}
	if !wantArray {
		key, _ := marshalIndented(path[depth], "", "")
		encoded = key + ": " + encoded
	}
	if empty {
		if multiline {
			return splice(doc, start+1, end, "\n"+lineIndent+unit+encoded+"\n"+lineIndent), nil
		}
		return splice(doc, start+1, end, encoded), nil
	}
	text := "," + sep + encoded
	// Insert after the last non-blank byte before the closing bracket.
	at := end
	for at > start+1 && isJSONSpace(doc[at-1]) {
		at--
	}
	return splice(doc, at, at, text), nil
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// splice replaces doc[from:to] with text.
func splice(doc []byte, from, to int, text string) []byte {
	out := make([]byte, 0, len(doc)+len(text))
	out = append(out, doc[:from]...)
	out = append(out, text...)
	return append(out, doc[to:]...)
}

// indentOfLine returns the leading blanks of the line holding offset.
func indentOfLine(doc []byte, offset int) string {
	lineStart := bytes.LastIndexByte(doc[:offset], '\n') + 1
	i := lineStart
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t') {
		i++
	}
	return string(doc[lineStart:i])
}

// indentUnit returns the indentation of the first indented line of doc, or
// two spaces.
func indentUnit(doc []byte) string {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		i := 0
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i > 0 && i < len(line) {
			return string(line[:i])
		}
	}
	return "  "
}

// marshalIndented encodes v as JSON without HTML escaping; with a non-empty
// indent each line after the first starts with prefix.
func marshalIndented(v any, prefix, indent string) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent(prefix, indent)
	}
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
