package wire

import (
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Output encodings.
const (
	EncodingText   = "text"   // UTF-8 text; invalid bytes escaped as \xNN (lossy: use base64 for exact bytes)
	EncodingBase64 = "base64" // standard base64 with padding: the exact bytes
)

// CheckEncoding returns the encoding name to use for "" (text) or an error
// naming the accepted values.
func CheckEncoding(name string) (string, *Error) {
	switch name {
	case "", EncodingText:
		return EncodingText, nil
	case EncodingBase64:
		return EncodingBase64, nil
	}
	return "", Refuse(RefuseBadEncoding, fmt.Sprintf("unknown encoding %q: use \"text\" or \"base64\"", name))
}

// EncodeChunk turns bytes read from a stream into protocol text.
//
// With EncodingBase64 data is encoded whole and consumed is len(data). With
// EncodingText every invalid UTF-8 byte is written as the four characters
// \xNN, and — unless atEnd — an incomplete UTF-8 sequence at the very end of
// data (a character cut by the chunk boundary) is held back: consumed is then
// smaller than len(data), so the caller's next cursor starts at that
// character and it is decoded whole next time.
func EncodeChunk(data []byte, encoding string, atEnd bool) (text string, consumed int) {
	if encoding == EncodingBase64 {
		return base64.StdEncoding.EncodeToString(data), len(data)
	}
	consumed = len(data)
	if !atEnd {
		consumed -= incompleteTail(data)
	}
	data = data[:consumed]
	if utf8.Valid(data) {
		return string(data), consumed
	}
	var b strings.Builder
	b.Grow(len(data) + 16)
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&b, `\x%02x`, data[0])
		} else {
			b.Write(data[:size])
		}
		data = data[size:]
	}
	return b.String(), consumed
}

// incompleteTail returns how many bytes at the end of data form the valid
// beginning of a UTF-8 sequence that the data cut off (0 to 3).
func incompleteTail(data []byte) int {
	for n := 1; n <= 3 && n <= len(data); n++ {
		c := data[len(data)-n]
		if c < 0x80 { // ASCII: nothing is cut
			return 0
		}
		if c >= 0xC0 { // a leading byte: is the sequence longer than what we have?
			need := 0
			switch {
			case c >= 0xF0 && c <= 0xF4:
				need = 4
			case c >= 0xE0:
				need = 3
			case c >= 0xC2 && c < 0xE0:
				need = 2
			default:
				return 0
			}
			if need > n && validPrefix(data[len(data)-n:]) {
				return n
			}
			return 0
		}
	}
	return 0
}

// validPrefix reports whether p could begin a valid UTF-8 sequence: appending
// continuation bytes could complete it.
func validPrefix(p []byte) bool {
	for _, cont := range []byte{0x80, 0x90, 0xA0, 0xB0, 0xBF} {
		q := append(append([]byte(nil), p...), cont, cont, cont)
		if r, size := utf8.DecodeRune(q); !(r == utf8.RuneError && size <= 1) {
			return true
		}
	}
	return false
}

// DecodeStdin turns the proposal's stdin field into bytes.
func DecodeStdin(data, encoding string) ([]byte, *Error) {
	switch encoding {
	case "", EncodingText:
		return []byte(data), nil
	case EncodingBase64:
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return nil, Refuse(RefuseBadEncoding, "stdin is not valid base64: "+err.Error()+"; send standard base64 with padding")
		}
		return b, nil
	}
	return nil, Refuse(RefuseBadEncoding, fmt.Sprintf("unknown stdin_encoding %q: use \"text\" or \"base64\"", encoding))
}
