package wire

import (
	"encoding/base64"
	"testing"
)

func TestEncodeChunk(t *testing.T) {
	euro := "\u20ac" // e2 82 ac
	tests := []struct {
		name     string
		data     string
		enc      string
		atEnd    bool
		text     string
		consumed int
	}{
		{"ascii", "hello", EncodingText, false, "hello", 5},
		{"valid multibyte", "a" + euro, EncodingText, false, "a" + euro, 4},
		{"invalid byte escaped", "a\xffb", EncodingText, false, `a\xffb`, 3},
		{"cut character held back", "a" + euro[:2], EncodingText, false, "a", 1},
		{"cut character at end escaped", "a" + euro[:2], EncodingText, true, `a\xe2\x82`, 3},
		{"lone continuation is invalid", "a\x82", EncodingText, false, `a\x82`, 2},
		{"invalid leader not held", "a\xc0", EncodingText, false, `a\xc0`, 2},
		{"cut 4-byte char", "x\xf0\x9f\x98", EncodingText, false, "x", 1},
		{"base64 exact", "a\xff", EncodingBase64, false, base64.StdEncoding.EncodeToString([]byte("a\xff")), 2},
		{"empty", "", EncodingText, false, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, consumed := EncodeChunk([]byte(tc.data), tc.enc, tc.atEnd)
			if text != tc.text || consumed != tc.consumed {
				t.Fatalf("EncodeChunk(%q) = %q, %d; want %q, %d", tc.data, text, consumed, tc.text, tc.consumed)
			}
		})
	}
}

func TestCheckEncodingAndStdin(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{{"", EncodingText, true}, {"text", EncodingText, true}, {"base64", EncodingBase64, true}, {"hex", "", false}} {
		got, err := CheckEncoding(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("CheckEncoding(%q) = %q, %v", tc.in, got, err)
		}
	}
	for _, tc := range []struct {
		data, enc, want string
		ok              bool
	}{{"hi", "", "hi", true}, {"aGk=", "base64", "hi", true}, {"!!", "base64", "", false}, {"x", "rot13", "", false}} {
		got, err := DecodeStdin(tc.data, tc.enc)
		if string(got) != tc.want || (err == nil) != tc.ok {
			t.Errorf("DecodeStdin(%q, %q) = %q, %v", tc.data, tc.enc, got, err)
		}
		if err != nil && err.Data.Code != RefuseBadEncoding {
			t.Errorf("code = %q", err.Data.Code)
		}
	}
}
