// Package wire is how agentgate's bridge talks: the JSON-RPC 2.0 frames that
// cross the socket, the method names and their parameters and results, the
// stable refusal codes, where the socket lives, and who may be on the other
// end of it. It is shared by the server (package agentbridge) and the Go
// client (package agentbridge/client) and depends on neither, so the
// latency-critical `agentgate hook` links little.
//
// docs/protocol.md is the reference for third parties; this package is its
// executable form.
package wire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// MaxFrame is the largest request frame the server reads, in bytes, not
// counting the terminating newline. A longer line is answered with
// CodeInvalidRequest ("frame too large") and the connection is closed after
// the reply, because finding the start of the next frame is unreliable.
const MaxFrame = 1 << 20

// MaxResponseFrame is the largest response frame the client reads. Responses
// carry output chunks (at most MaxChunk bytes, up to 4 bytes of text per byte
// when escaped) and so may exceed MaxFrame.
const MaxResponseFrame = 16 << 20

// Version is the JSON-RPC version string every frame carries.
const Version = "2.0"

// Standard JSON-RPC 2.0 error codes and the one application code agentgate
// uses. Application errors carry ErrorData with a stable string code.
const (
	CodeParseError     = -32700 // the frame is not JSON (or not UTF-8)
	CodeInvalidRequest = -32600 // JSON, but not a request object; or the frame is too large
	CodeMethodNotFound = -32601 // unknown method
	CodeInvalidParams  = -32602 // params missing, of the wrong shape, or with unknown fields
	CodeInternalError  = -32603 // a bug in agentgate; the message says what failed
	CodeApplication    = -32000 // a refusal; Error.Data holds {code, message}
)

// ErrFrameTooLarge is returned by FrameReader.Next for a line longer than the
// reader's limit. The reader is then positioned inside that line: the caller
// must stop reading from it.
var ErrFrameTooLarge = errors.New("frame too large")

// FrameReader splits a stream into newline-terminated frames without ever
// holding more than its limit plus one buffer of bytes.
type FrameReader struct {
	// r buffers the underlying stream.
	r *bufio.Reader
	// max is the largest frame accepted, in bytes.
	max int
	// buf accumulates a frame that spans several buffer fills; reused.
	buf []byte
}

// NewFrameReader returns a reader of frames from r accepting at most max
// bytes per frame (max ≤ 0 means MaxFrame).
func NewFrameReader(r io.Reader, max int) *FrameReader {
	if max <= 0 {
		max = MaxFrame
	}
	return &FrameReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next frame without its terminating "\n" (a preceding "\r"
// is dropped too). The returned slice is valid until the next call. A final
// frame without a newline is returned before io.EOF. Empty lines are
// skipped. A line longer than the limit yields ErrFrameTooLarge; other
// errors are the underlying reader's.
func (fr *FrameReader) Next() ([]byte, error) {
	for {
		fr.buf = fr.buf[:0]
		for {
			chunk, err := fr.r.ReadSlice('\n')
			if len(fr.buf)+len(chunk) > fr.max+2 { // +2: the "\r\n" does not count
				return nil, ErrFrameTooLarge
			}
			fr.buf = append(fr.buf, chunk...)
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil && (err != io.EOF || len(fr.buf) == 0) {
				return nil, err
			}
			break
		}
		line := bytes.TrimSuffix(fr.buf, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) > fr.max {
			return nil, ErrFrameTooLarge
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return line, nil
	}
}

// Request is one decoded JSON-RPC request.
type Request struct {
	// ID is the request id exactly as sent (a JSON string or number), or nil
	// for a notification, which gets no response.
	ID json.RawMessage
	// Method is the method name, e.g. "exec.propose".
	Method string
	// Params is the raw params value (an object), or nil when absent.
	Params json.RawMessage
}

// IsNotification reports whether the request carries no id and so must not
// be answered (JSON-RPC 2.0 §4.1).
func (r *Request) IsNotification() bool { return r.ID == nil }

// Response is one JSON-RPC response frame. Exactly one of Result and Error is
// set.
type Response struct {
	// JSONRPC is always "2.0".
	JSONRPC string `json:"jsonrpc"`
	// ID echoes the request's id; JSON null when it could not be read.
	ID json.RawMessage `json:"id"`
	// Result is the method's result on success.
	Result json.RawMessage `json:"result,omitempty"`
	// Error describes the failure.
	Error *Error `json:"error,omitempty"`
}

// Error is a JSON-RPC error object. For refusals Code is CodeApplication and
// Data carries the stable code; Message then equals Data.Message.
type Error struct {
	// Code is one of the Code* constants.
	Code int `json:"code"`
	// Message is a sentence a person understands.
	Message string `json:"message"`
	// Data is set for application errors (and for invalid params, naming the
	// code "invalid_params").
	Data *ErrorData `json:"data,omitempty"`
}

// ErrorData is the machine-readable part of an application error.
type ErrorData struct {
	// Code is a stable string such as "denied" or "not_found" (see the Refusal
	// codes in codes.go and docs/protocol.md).
	Code string `json:"code"`
	// Message is the same human sentence as Error.Message.
	Message string `json:"message"`
}

// Error formats the error as "message (code)".
func (e *Error) Error() string {
	if e.Data != nil && e.Data.Code != "" {
		return fmt.Sprintf("%s (%s)", e.Message, e.Data.Code)
	}
	return fmt.Sprintf("%s (JSON-RPC %d)", e.Message, e.Code)
}

// NewError returns a JSON-RPC error with the standard code and message.
func NewError(code int, message string) *Error { return &Error{Code: code, Message: message} }

// Refuse returns an application error with the stable string code and the
// human message.
func Refuse(code, message string) *Error {
	return &Error{Code: CodeApplication, Message: message, Data: &ErrorData{Code: code, Message: message}}
}

// nullID is the id of a response to a request whose id could not be read.
var nullID = json.RawMessage("null")

// DecodeFrame parses one frame into a Request. On failure it returns a
// JSON-RPC error to send back and the id to send it with (JSON null when the
// id could not be read). Rules, in order:
//   - not valid UTF-8, or not JSON → CodeParseError;
//   - a JSON array (a batch; unsupported) or any non-object → CodeInvalidRequest;
//   - "id" present but not a string or number (null included) → CodeInvalidRequest;
//   - a member other than "jsonrpc", "id", "method" and "params" — names
//     are case-sensitive, so "Method" is such a member — or a member given
//     twice → CodeInvalidParams with data.code invalid_params, naming the
//     member (SPEC §8: a gate never guesses which of two values counts);
//   - "jsonrpc" other than "2.0", "method" missing or not a non-empty
//     string, or "params" present but not an object → CodeInvalidRequest.
func DecodeFrame(frame []byte) (*Request, json.RawMessage, *Error) {
	if !utf8.Valid(frame) {
		return nil, nullID, NewError(CodeParseError, "parse error: the frame is not valid UTF-8")
	}
	if !json.Valid(frame) {
		return nil, nullID, NewError(CodeParseError, "parse error: the frame is not valid JSON")
	}
	trimmed := bytes.TrimLeft(frame, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		if len(trimmed) > 0 && trimmed[0] == '[' {
			return nil, nullID, NewError(CodeInvalidRequest, "invalid request: batches are not supported; send one object per line")
		}
		return nil, nullID, NewError(CodeInvalidRequest, "invalid request: a frame must be a JSON object")
	}
	members, problem, err := objectMembers(trimmed, envelopeMembers, "request")
	if err != nil {
		return nil, nullID, NewError(CodeParseError, "parse error: "+err.Error())
	}
	id := nullID
	rawID, hasID := members["id"]
	if hasID {
		switch firstByte(rawID) {
		case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			id = bytes.Clone(rawID) // the request outlives the frame's buffer
		default:
			return nil, nullID, NewError(CodeInvalidRequest, "invalid request: \"id\" must be a string or a number")
		}
	}
	if problem != nil {
		return nil, id, problem
	}
	var version string
	if raw, ok := members["jsonrpc"]; !ok || json.Unmarshal(raw, &version) != nil || version != Version {
		return nil, id, NewError(CodeInvalidRequest, "invalid request: \"jsonrpc\" must be \"2.0\"")
	}
	var method string
	if raw, ok := members["method"]; !ok || json.Unmarshal(raw, &method) != nil || method == "" {
		return nil, id, NewError(CodeInvalidRequest, "invalid request: \"method\" must be a non-empty string")
	}
	req := &Request{Method: method}
	if hasID {
		req.ID = id
	}
	if raw, ok := members["params"]; ok {
		if firstByte(raw) != '{' {
			return nil, id, NewError(CodeInvalidRequest, "invalid request: \"params\" must be an object")
		}
		req.Params = bytes.Clone(raw) // the request outlives the frame's buffer
	}
	return req, id, nil
}

// envelopeMembers are the members a request object may have.
var envelopeMembers = map[string]bool{"jsonrpc": true, "id": true, "method": true, "params": true}

// objectMembers splits a valid JSON object into its members. Besides a
// syntax error it reports, as an invalid_params error naming the member
// (where says whose member: "request", "params"), the first member that is
// not in allowed — names compared exactly, case included — or that appears
// twice; the members are still returned. The values are slices of obj, not
// copies: a frame's megabyte of argv is scanned, never decoded, here.
func objectMembers(obj []byte, allowed map[string]bool, where string) (map[string]json.RawMessage, *Error, error) {
	members := make(map[string]json.RawMessage, 4)
	var problem *Error
	err := scanMembers(obj, func(name string, value []byte) {
		if problem == nil {
			if _, seen := members[name]; seen {
				problem = memberError(fmt.Sprintf("%s member %q appears twice; send each member once", where, name))
			} else if !allowed[name] {
				problem = memberError(fmt.Sprintf("unknown %s member %q (member names are case-sensitive); the accepted members are %s", where, name, memberList(allowed)))
			}
		}
		members[name] = value
	})
	if err != nil {
		return nil, nil, err
	}
	return members, problem, nil
}

// DuplicateMember returns the first member name the JSON object obj holds
// twice, or "" when none does (or obj is not an object: its decoder says
// so). For decoders that collapse repeated members, last one winning — an
// MCP tool call's arguments — and must refuse them instead.
func DuplicateMember(obj []byte) string {
	seen := make(map[string]bool, 8)
	dup := ""
	scanMembers(obj, func(name string, _ []byte) {
		if seen[name] && dup == "" {
			dup = name
		}
		seen[name] = true
	})
	return dup
}

// errMalformed is scanMembers' error for input that is not a JSON object.
var errMalformed = errors.New("not a well-formed JSON object")

// scanMembers calls fn with each member of the JSON object obj, in order:
// its name, decoded, and its value's bytes (a slice of obj). It skips the
// values without decoding them (strings are skipped by their quotes and
// escapes, arrays and objects by depth), so it costs one pass over obj. It
// checks only what it needs to find the members; values are checked by
// whoever decodes them. Anything it cannot follow is errMalformed.
func scanMembers(obj []byte, fn func(name string, value []byte)) error {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return errMalformed
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return errMalformed
		}
		end := skipString(obj, i)
		if end < 0 {
			return errMalformed
		}
		var name string
		if err := json.Unmarshal(obj[i:end], &name); err != nil {
			return errMalformed
		}
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return errMalformed
		}
		i = skipSpace(obj, i+1)
		vend := skipValue(obj, i)
		if vend < 0 {
			return errMalformed
		}
		fn(name, obj[i:vend])
		i = skipSpace(obj, vend)
		if i >= len(obj) {
			return errMalformed
		}
		switch obj[i] {
		case ',':
			i = skipSpace(obj, i+1)
		case '}':
			return nil
		default:
			return errMalformed
		}
	}
}

// skipSpace returns the index of the first non-space byte of b at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the index just past the JSON string starting at b[i]
// (a '"'), or -1 if it does not end.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); {
		k := bytes.IndexAny(b[j:], `"\`)
		if k < 0 {
			return -1
		}
		j += k
		if b[j] == '"' {
			return j + 1
		}
		j += 2 // a backslash and the byte it escapes
	}
	return -1
}

// skipValue returns the index just past the JSON value starting at b[i],
// or -1 if it does not end.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := skipString(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\r' && b[j] != '\n' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// memberError is the invalid_params error for a member problem.
func memberError(msg string) *Error {
	msg = "invalid params: " + msg
	return &Error{Code: CodeInvalidParams, Message: msg, Data: &ErrorData{Code: RefuseInvalidParams, Message: msg}}
}

// memberList lists allowed member names, sorted and quoted.
func memberList(allowed map[string]bool) string {
	names := make([]string, 0, len(allowed))
	for n := range allowed {
		names = append(names, strconv.Quote(n))
	}
	if len(names) == 0 {
		return "none"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// paramMembers caches, per params type, the member names its JSON tags
// accept (map[reflect.Type]map[string]bool).
var paramMembers sync.Map

// membersOf returns the member names a struct type's fields accept: each
// exported field's JSON name (its tag's name, else the field name), minus
// fields tagged "-". Embedded structs are not used by params types.
func membersOf(t reflect.Type) map[string]bool {
	if m, ok := paramMembers.Load(t); ok {
		return m.(map[string]bool)
	}
	names := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		names[name] = true
	}
	paramMembers.Store(t, names)
	return names
}

// firstByte returns the first non-space byte of a JSON value, or 0.
func firstByte(v []byte) byte {
	v = bytes.TrimLeft(v, " \t\r\n")
	if len(v) == 0 {
		return 0
	}
	return v[0]
}

// DecodeParams unmarshals params into dst, a pointer to a params struct,
// strictly: every member must be one of dst's JSON member names exactly —
// case-sensitive, where encoding/json alone would match "Argv" to "argv" —
// and appear once, where encoding/json alone would let the last of two
// win; a misspelt option must not be silently ignored by a gate, and a gate
// never guesses which of two values counts. Absent params decode as {}.
// The error is a CodeInvalidParams error (data.code invalid_params) naming
// the member or the problem.
func DecodeParams(params json.RawMessage, dst any) *Error {
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	if t := reflect.TypeOf(dst); t != nil && t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
		if firstByte(params) == '{' {
			if _, problem, err := objectMembers(params, membersOf(t.Elem()), "params"); err == nil && problem != nil {
				return problem
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return &Error{Code: CodeInvalidParams, Message: "invalid params: " + err.Error(),
			Data: &ErrorData{Code: RefuseInvalidParams, Message: "invalid params: " + err.Error()}}
	}
	return nil
}

// EncodeResponse returns the response frame (with its newline) for a result
// or an error. A result that cannot be marshalled becomes an internal error.
func EncodeResponse(id json.RawMessage, result any, rpcErr *Error) []byte {
	if id == nil {
		id = nullID
	}
	resp := Response{JSONRPC: Version, ID: id, Error: rpcErr}
	if rpcErr == nil {
		raw, err := marshalLine(result)
		if err != nil {
			resp.Error = NewError(CodeInternalError, "internal error: cannot encode the result: "+err.Error())
		} else {
			resp.Result = bytes.TrimSuffix(raw, []byte("\n"))
		}
	}
	out, err := marshalLine(resp)
	if err != nil { // only reachable with a malformed id, which DecodeFrame never yields
		out, _ = marshalLine(Response{JSONRPC: Version, ID: nullID, Error: NewError(CodeInternalError, "internal error: "+err.Error())})
	}
	return out
}

// marshalLine encodes v as one JSON line without HTML escaping, so that
// "<", ">" and "&" in commands stay readable in frames and logs.
func marshalLine(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// EncodeRequest returns the request frame (with its newline). A nil id makes
// a notification.
func EncodeRequest(id json.RawMessage, method string, params any) ([]byte, error) {
	type request struct {
		JSONRPC string          `json:"jsonrpc"`          // always "2.0"
		ID      json.RawMessage `json:"id,omitempty"`     // absent for a notification
		Method  string          `json:"method"`           // the method name
		Params  any             `json:"params,omitempty"` // the params object
	}
	out, err := marshalLine(request{JSONRPC: Version, ID: id, Method: method, Params: params})
	if err != nil {
		return nil, fmt.Errorf("encode %s request: %w", method, err)
	}
	return out, nil
}
