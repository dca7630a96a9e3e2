package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestFrameReaderSplitsLines(t *testing.T) {
	in := "{\"a\":1}\n\n  \r\n{\"b\":2}\r\n{\"c\":3}"
	fr := NewFrameReader(strings.NewReader(in), 0)
	var got []string
	for {
		f, err := fr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		got = append(got, string(f))
	}
	want := []string{`{"a":1}`, `{"b":2}`, `{"c":3}`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("frames = %q, want %q", got, want)
	}
}

func TestFrameReaderCap(t *testing.T) {
	tests := []struct {
		name    string
		lineLen int
		tooBig  bool
	}{
		{"exactly the cap", 100, false},
		{"one over", 101, true},
		{"far over, spanning buffers", 300 << 10, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := strings.Repeat("x", tc.lineLen) + "\r\n{}\n"
			fr := NewFrameReader(strings.NewReader(in), 100)
			if tc.lineLen > 100<<10 {
				fr = NewFrameReader(strings.NewReader(in), 200<<10)
			}
			f, err := fr.Next()
			if tc.tooBig {
				if !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("err = %v, want ErrFrameTooLarge", err)
				}
				return
			}
			if err != nil || len(f) != tc.lineLen {
				t.Fatalf("Next = %d bytes, %v; want %d bytes", len(f), err, tc.lineLen)
			}
			if f, err := fr.Next(); err != nil || string(f) != "{}" {
				t.Fatalf("second frame = %q, %v", f, err)
			}
		})
	}
}

func TestDecodeFrame(t *testing.T) {
	tests := []struct {
		name     string
		frame    string
		wantCode int    // 0: success
		wantID   string // id to answer with
		method   string
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"hello","params":{"provider":"x"}}`, 0, "1", "hello"},
		{"string id", `{"jsonrpc":"2.0","id":"a","method":"exec.list"}`, 0, `"a"`, "exec.list"},
		{"notification", `{"jsonrpc":"2.0","method":"app.show"}`, 0, "null", "app.show"},
		{"unknown member refused", `{"jsonrpc":"2.0","id":2,"method":"m","extra":true}`, CodeInvalidParams, "2", ""},
		{"not json", `{"jsonrpc":`, CodeParseError, "null", ""},
		{"invalid utf-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", CodeParseError, "null", ""},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"hello"}]`, CodeInvalidRequest, "null", ""},
		{"scalar", `42`, CodeInvalidRequest, "null", ""},
		{"wrong version", `{"jsonrpc":"1.0","id":3,"method":"hello"}`, CodeInvalidRequest, "3", ""},
		{"missing version", `{"id":3,"method":"hello"}`, CodeInvalidRequest, "3", ""},
		{"missing method", `{"jsonrpc":"2.0","id":4}`, CodeInvalidRequest, "4", ""},
		{"method not string", `{"jsonrpc":"2.0","id":4,"method":7}`, CodeInvalidRequest, "4", ""},
		{"empty method", `{"jsonrpc":"2.0","id":4,"method":""}`, CodeInvalidRequest, "4", ""},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"hello"}`, CodeInvalidRequest, "null", ""},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"hello"}`, CodeInvalidRequest, "null", ""},
		{"params array", `{"jsonrpc":"2.0","id":5,"method":"hello","params":[1]}`, CodeInvalidRequest, "5", ""},
		{"duplicate member", `{"jsonrpc":"2.0","id":6,"method":"hello","method":"exec.list"}`, CodeInvalidParams, "6", ""},
		{"case matters", `{"JSONRPC":"2.0","id":7,"Method":"hello"}`, CodeInvalidParams, "7", ""},
		{"params in another case", `{"jsonrpc":"2.0","id":8,"method":"hello","Params":{}}`, CodeInvalidParams, "8", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, id, rerr := DecodeFrame([]byte(tc.frame))
			if string(id) != tc.wantID {
				t.Errorf("id = %s, want %s", id, tc.wantID)
			}
			if tc.wantCode == 0 {
				if rerr != nil {
					t.Fatalf("unexpected error %v", rerr)
				}
				if req.Method != tc.method {
					t.Fatalf("method = %q, want %q", req.Method, tc.method)
				}
				return
			}
			if rerr == nil || rerr.Code != tc.wantCode {
				t.Fatalf("error = %v, want code %d", rerr, tc.wantCode)
			}
			if req != nil {
				t.Fatalf("request returned with an error")
			}
		})
	}
}

// TestStrictMembers: a member in another case, repeated, or unknown is
// refused with invalid_params naming it — in the envelope and in params.
func TestStrictMembers(t *testing.T) {
	frames := []struct {
		frame  string
		member string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"exec.list","Method":"hello"}`, `"Method"`},
		{`{"jsonrpc":"2.0","id":1,"method":"exec.list","id":2}`, `"id"`},
		{`{"jsonrpc":"2.0","id":1,"method":"exec.list","extra":null}`, `"extra"`},
	}
	for _, tc := range frames {
		_, _, rerr := DecodeFrame([]byte(tc.frame))
		if rerr == nil || rerr.Code != CodeInvalidParams || rerr.Data == nil || rerr.Data.Code != RefuseInvalidParams || !strings.Contains(rerr.Message, tc.member) {
			t.Errorf("%s: error = %v, want invalid_params naming %s", tc.frame, rerr, tc.member)
		}
	}
	params := []struct {
		params string
		member string
	}{
		{`{"Argv":["rm","-rf","/"],"cwd":"."}`, `"Argv"`},
		{`{"argv":["true"],"ARGV":["rm","-rf","/"]}`, `"ARGV"`},
		{`{"argv":["true"],"argv":["rm","-rf","/"]}`, `"argv"`},
		{`{"argv":["true"],"timeout_ms":5,"timeout_ms":600000}`, `"timeout_ms"`},
		{`{"argv":["true"],"env":{"LD_PRELOAD":"x"}}`, `"env"`},
		{`{"argv":["true"],"Cwd":"/"}`, `"Cwd"`},
	}
	for _, tc := range params {
		var p ProposeParams
		rerr := DecodeParams(json.RawMessage(tc.params), &p)
		if rerr == nil || rerr.Code != CodeInvalidParams || rerr.Data == nil || rerr.Data.Code != RefuseInvalidParams || !strings.Contains(rerr.Message, tc.member) {
			t.Errorf("%s: error = %v, want invalid_params naming %s", tc.params, rerr, tc.member)
		}
	}
	var e Empty
	if rerr := DecodeParams(json.RawMessage(`{"x":1}`), &e); rerr == nil || !strings.Contains(rerr.Message, `"x"`) {
		t.Errorf("a member in params that take none: %v", rerr)
	}
	var p ProposeParams
	if rerr := DecodeParams(json.RawMessage(`{"argv":["true"],"cwd":".","stdin":"","stdin_encoding":"base64","timeout_ms":5,"reason":"r","wait_ms":1,"max_bytes":2,"encoding":"text"}`), &p); rerr != nil {
		t.Errorf("every documented member: %v", rerr)
	}
}

func TestDecodeParamsStrict(t *testing.T) {
	var p HelloParams
	if err := DecodeParams(json.RawMessage(`{"provider":"a","project_root":"/x","client":"c"}`), &p); err != nil {
		t.Fatalf("DecodeParams: %v", err)
	}
	if p.Provider != "a" || p.ProjectRoot != "/x" || p.Client != "c" {
		t.Fatalf("decoded %+v", p)
	}
	err := DecodeParams(json.RawMessage(`{"provider":"a","time_out":5}`), &p)
	if err == nil || err.Code != CodeInvalidParams || !strings.Contains(err.Message, "time_out") {
		t.Fatalf("unknown field: err = %v, want invalid params naming time_out", err)
	}
	var w WaitParams
	if err := DecodeParams(nil, &w); err != nil {
		t.Fatalf("absent params: %v", err)
	}
	if err := DecodeParams(json.RawMessage(`{"cursor":"x"}`), &w); err == nil || err.Code != CodeInvalidParams {
		t.Fatalf("wrong type: err = %v", err)
	}
}

func TestEncodeResponse(t *testing.T) {
	ok := EncodeResponse(json.RawMessage(`7`), HelloResult{Session: "s1"}, nil)
	if !bytes.HasSuffix(ok, []byte("\n")) || bytes.Count(ok, []byte("\n")) != 1 {
		t.Fatalf("response is not one line: %q", ok)
	}
	var r Response
	if err := json.Unmarshal(ok, &r); err != nil || string(r.ID) != "7" || r.Error != nil || !strings.Contains(string(r.Result), `"session":"s1"`) {
		t.Fatalf("decoded %+v, %v", r, err)
	}
	bad := EncodeResponse(nil, nil, Refuse(RefuseDenied, "no."))
	if err := json.Unmarshal(bad, &r); err != nil || string(r.ID) != "null" || r.Error == nil || r.Error.Data.Code != "denied" || r.Error.Code != CodeApplication {
		t.Fatalf("decoded %+v, %v", r, err)
	}
	unencodable := EncodeResponse(json.RawMessage(`1`), map[string]any{"f": func() {}}, nil)
	if err := json.Unmarshal(unencodable, &r); err != nil || r.Error == nil || r.Error.Code != CodeInternalError {
		t.Fatalf("unencodable result gave %s", unencodable)
	}
}

func TestEncodeRequestRoundTrip(t *testing.T) {
	frame, err := EncodeRequest(json.RawMessage(`12`), MethodPropose, ProposeParams{Argv: []string{"echo", "é"}})
	if err != nil {
		t.Fatal(err)
	}
	req, _, rerr := DecodeFrame(bytes.TrimSuffix(frame, []byte("\n")))
	if rerr != nil || req.Method != MethodPropose || string(req.ID) != "12" {
		t.Fatalf("round trip: %+v %v", req, rerr)
	}
	var p ProposeParams
	if err := DecodeParams(req.Params, &p); err != nil || p.Argv[1] != "é" {
		t.Fatalf("params: %+v %v", p, err)
	}
}

// TestScanMembersMatchesDecoder: the one-pass member scanner finds the same
// names and values encoding/json does, and refuses what is not an object.
func TestScanMembersMatchesDecoder(t *testing.T) {
	objects := []string{
		`{}`, ` { } `,
		`{"a":1,"b":"x","c":null,"d":true,"e":false,"f":-1.5e3}`,
		`{"argv":["a","b\"c","d\\","é\u00e9"],"n":{"x":[1,{"y":"}"}],"z":"]"}}`,
		"{\n\t\"k\" :\t\"v\" ,\r\n\"k2\":[ ]\n}",
		`{"esc\"aped":"1","\u0041rgv":2}`,
	}
	for _, obj := range objects {
		var got []string
		if err := scanMembers([]byte(obj), func(name string, value []byte) { got = append(got, name+"="+string(value)) }); err != nil {
			t.Fatalf("%s: %v", obj, err)
		}
		var want []string
		dec := json.NewDecoder(strings.NewReader(obj))
		dec.Token()
		for dec.More() {
			tok, _ := dec.Token()
			var v json.RawMessage
			dec.Decode(&v)
			want = append(want, tok.(string)+"="+string(v))
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s:\nscan    %q\ndecoder %q", obj, got, want)
		}
	}
	for _, bad := range []string{``, `[]`, `{`, `{"a"}`, `{"a":}`, `{"a":"x`, `{"a":1,}`, `{"a":1 "b":2}`, `{a:1}`, `{"a":[1,2}`} {
		if err := scanMembers([]byte(bad), func(string, []byte) {}); err == nil {
			t.Errorf("%q scanned without error", bad)
		}
	}
}

func TestDuplicateMember(t *testing.T) {
	for obj, want := range map[string]string{
		`{"a":1,"b":{"a":2}}`:   "",
		`{"a":1,"b":2,"a":3}`:   "a",
		`{"x":[1],"y":1,"y":2}`: "y",
		`{}`:                    "",
		`not json`:              "",
	} {
		if got := DuplicateMember([]byte(obj)); got != want {
			t.Errorf("DuplicateMember(%s) = %q, want %q", obj, got, want)
		}
	}
}
