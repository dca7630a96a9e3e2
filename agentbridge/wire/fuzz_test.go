package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
)

// FuzzDecodeFrame feeds arbitrary bytes through the frame reader and the
// decoder: they must never panic, frames never exceed the cap, every error is
// a well-formed JSON-RPC error whose response encodes as one JSON line, and
// every accepted request has a method and params that are an object.
func FuzzDecodeFrame(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"hello","params":{"provider":"p","project_root":"/tmp","client":"c"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","method":"exec.propose","params":{"argv":["echo","hi"],"cwd":"."}}` + "\n" + `[1,2]`))
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}\r\n\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"id":2,"method":"a"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1e400,"method":"a","params":{"argv":null}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		fr := NewFrameReader(bytes.NewReader(in), 256)
		for {
			frame, err := fr.Next()
			if errors.Is(err, ErrFrameTooLarge) || err == io.EOF {
				return
			}
			if err != nil {
				t.Fatalf("unexpected reader error %v", err)
			}
			if len(frame) > 256 {
				t.Fatalf("frame of %d bytes passed a 256-byte cap", len(frame))
			}
			req, id, rerr := DecodeFrame(frame)
			if rerr != nil {
				if req != nil {
					t.Fatalf("request and error both returned")
				}
				if rerr.Code != CodeParseError && rerr.Code != CodeInvalidRequest && rerr.Code != CodeInvalidParams {
					t.Fatalf("unexpected code %d", rerr.Code)
				}
			} else if req.Method == "" || (req.Params != nil && firstByte(req.Params) != '{') {
				t.Fatalf("accepted a malformed request %+v", req)
			}
			out := EncodeResponse(id, Empty{}, rerr)
			if !json.Valid(bytes.TrimSuffix(out, []byte("\n"))) || bytes.Count(out, []byte("\n")) != 1 {
				t.Fatalf("response is not one JSON line: %q", out)
			}
			if req != nil {
				var p ProposeParams
				_ = DecodeParams(req.Params, &p)
			}
		}
	})
}
