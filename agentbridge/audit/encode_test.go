package audit

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentgate/agentgate/exec/display"
	"github.com/agentgate/agentgate/exec/runinfo"
)

// oracleMarshal is how Marshal encoded entries before the hand-written
// encoder: encoding/json, then oracleEscapeInvisible. Marshal must produce
// the same bytes.
func oracleMarshal(e Entry) ([]byte, error) {
	raw, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return append(oracleEscapeInvisible(raw), '\n'), nil
}

// oracleEscapeInvisible rewrites DEL and every non-ASCII rune that
// display.NeedsEscape flags in encoding/json's output as a JSON \u escape
// (a surrogate pair above U+FFFF): the former escapeInvisible, plus DEL,
// which encoding/json leaves raw.
func oracleEscapeInvisible(raw []byte) []byte {
	var out []byte
	for i := 0; i < len(raw); {
		c := raw[i]
		if c == 0x7f {
			if out == nil {
				out = append(make([]byte, 0, len(raw)+32), raw[:i]...)
			}
			out = append(out, `\u007f`...)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			if out != nil {
				out = append(out, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(raw[i:])
		if !display.NeedsEscape(r) {
			if out != nil {
				out = append(out, raw[i:i+size]...)
			}
			i += size
			continue
		}
		if out == nil {
			out = append(make([]byte, 0, len(raw)+32), raw[:i]...)
		}
		if r > 0xFFFF {
			r -= 0x10000
			out = fmt.Appendf(out, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += size
	}
	if out == nil {
		return raw
	}
	return out
}

func TestAppendString(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"", `""`},
		{"plain ascii ~", `"plain ascii ~"`},
		{`quote " backslash \ slash /`, `"quote \" backslash \\ slash /"`},
		{"\b\f\n\r\t", `"\b\f\n\r\t"`},
		{"\x00\x01\x1b\x1f", `"\u0000\u0001\u001b\u001f"`},
		{"del\x7f", `"del\u007f"`}, // a control character, escaped (encoding/json would leave it raw)
		{"<a href='x'>&amp;</a>", `"\u003ca href='x'\u003e\u0026amp;\u003c/a\u003e"`},
		{"bad\xffbyte", `"bad\ufffdbyte"`},
		{"\xe2\x80", `"\ufffd\ufffd"`},               // truncated sequence: one \ufffd per byte
		{"\xed\xa0\x80", `"\ufffd\ufffd\ufffd"`},     // UTF-8-encoded surrogate
		{"\uFFFD", "\"\uFFFD\""},                     // a real U+FFFD is printable
		{"a\u2028b\u2029c", `"a\u2028b\u2029c"`},     // line and paragraph separators
		{"rtl\u202eoverride", `"rtl\u202eoverride"`}, // bidi
		{"\u2066iso\u2069 \u200e\u200f\u061c", `"\u2066iso\u2069 \u200e\u200f\u061c"`},
		{"zero\u200bwidth\ufeff", `"zero\u200bwidth\ufeff"`},
		{"nbsp\u00a0c1\u0085", `"nbsp\u00a0c1\u0085"`},
		{"tag\U000E0041", `"tag\udb40\udc41"`},
		{"vs\ufe0f\U000E0100", `"vs\ufe0f\udb40\udd00"`},
		{"emoji\U0001F600 é 日本", "\"emoji\U0001F600 é 日本\""},
	} {
		got := string(appendString(nil, tc.in))
		if got != tc.want {
			t.Errorf("appendString(%q) = %s, want %s", tc.in, got, tc.want)
		}
		oracle, _ := json.Marshal(tc.in)
		if string(oracleEscapeInvisible(oracle)) != got {
			t.Errorf("appendString(%q) = %s, the former encoding %s", tc.in, got, oracleEscapeInvisible(oracle))
		}
	}
}

// stringPieces are what random strings are built from: the characters
// whose escaping differs, and ordinary text around them.
var stringPieces = []string{
	"a", "Z", "0", " ", "~", "git status", "/home/ada/src", "-", "'", "`",
	`"`, `\`, "/", "<", ">", "&", "\x00", "\x01", "\b", "\t", "\n", "\f", "\r", "\x1b", "\x1f", "\x7f",
	"\xff", "\xfe", "\xc0", "\x80", "\xe2\x80", "\xf0\x9f\x98", "\xed\xa0\x80", "\xc3",
	"\u0085", "\u00a0", "\u00ad", "é", "ß", "日本語", "\u0301", "\u034f", "\u061c", "\u115f",
	"\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\u2028", "\u2029",
	"\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069",
	"\u2800", "\u3164", "\ufe0f", "\ufeff", "\ufffc", "\ufffd", "\uffa0",
	"\U0001F600", "\U0001D159", "\U000E0001", "\U000E0041", "\U000E0100", "\U0010FFFF", "\U000F0000",
}

// randomString returns a string of up to 12 pieces: stringPieces, random
// bytes and random valid runes.
func randomString(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(13) {
		switch rng.IntN(10) {
		case 0:
			b.WriteByte(byte(rng.IntN(256)))
		case 1:
			r := rune(rng.IntN(utf8.MaxRune + 1))
			if !utf8.ValidRune(r) {
				r = '?'
			}
			b.WriteRune(r)
		default:
			b.WriteString(stringPieces[rng.IntN(len(stringPieces))])
		}
	}
	return b.String()
}

// randomInt returns an edge value or a random one, sometimes 0.
func randomInt(rng *rand.Rand) int64 {
	edges := []int64{0, 1, -1, 9, 10, 255, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64}
	if rng.IntN(2) == 0 {
		return edges[rng.IntN(len(edges))]
	}
	return rng.Int64() >> rng.IntN(63)
}

// randomTime returns the zero time or an instant in years 0…9999 in UTC,
// Local or a fixed zone, with whole, rounded or arbitrary nanoseconds;
// with invalid set, sometimes a time json.Marshal refuses (year 10000 or
// later or before 0, a zone offset of 24 hours).
func randomTime(rng *rand.Rand, invalid bool) time.Time {
	if rng.IntN(8) == 0 {
		return time.Time{}
	}
	lo := time.Date(0, 1, 2, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(9999, 12, 30, 0, 0, 0, 0, time.UTC).Unix()
	if invalid && rng.IntN(4) == 0 {
		lo, hi = time.Date(-3000, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(20000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	}
	ns := []int64{0, 500_000_000, 123_000_000, 100, int64(rng.IntN(1e9))}[rng.IntN(5)]
	t := time.Unix(lo+rng.Int64N(hi-lo), ns)
	zones := []*time.Location{time.UTC, time.Local, time.FixedZone("IST", 5*3600+1800), time.FixedZone("", -8*3600), time.FixedZone("X", -(23*3600 + 59*60))}
	if invalid && rng.IntN(8) == 0 {
		zones = []*time.Location{time.FixedZone("far", 24*3600), time.FixedZone("far", -25*3600)}
	}
	return t.In(zones[rng.IntN(len(zones))])
}

// fillRandom sets each field of the struct v at random, leaving about a
// third of them zero. It knows every field type of Entry and of the structs
// it points to, and fails the test on any other: a new field type must be
// taught to the generator (and to appendEntry).
func fillRandom(tb testing.TB, rng *rand.Rand, v reflect.Value, invalid bool) {
	for i := range v.NumField() {
		if rng.IntN(3) == 0 {
			continue
		}
		fillValue(tb, rng, v.Field(i), v.Type().Field(i).Name, invalid)
	}
}

// fillValue sets v (the field named name) to a random value of its type.
func fillValue(tb testing.TB, rng *rand.Rand, v reflect.Value, name string, invalid bool) {
	switch {
	case v.Type() == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(randomTime(rng, invalid)))
	case v.Kind() == reflect.String:
		v.SetString(randomString(rng))
	case v.Kind() == reflect.Int || v.Kind() == reflect.Int64:
		n := randomInt(rng)
		if v.Kind() == reflect.Int && strconv.IntSize == 32 {
			n = int64(int32(n))
		}
		v.SetInt(n)
	case v.Kind() == reflect.Bool:
		v.SetBool(true)
	case v.Kind() == reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if p.Elem().Kind() == reflect.Struct {
			fillRandom(tb, rng, p.Elem(), invalid)
		} else {
			fillValue(tb, rng, p.Elem(), name, invalid)
		}
		v.Set(p)
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		list := reflect.MakeSlice(v.Type(), rng.IntN(4), rng.IntN(4)+4)
		for j := range list.Len() {
			list.Index(j).SetString(randomString(rng))
		}
		v.Set(list)
	default:
		tb.Fatalf("fillRandom: no generator for field %s of type %s", name, v.Type())
	}
}

// randomEntry returns an Entry with random fields (see fillRandom).
func randomEntry(tb testing.TB, rng *rand.Rand, invalid bool) Entry {
	var e Entry
	fillRandom(tb, rng, reflect.ValueOf(&e).Elem(), invalid)
	return e
}

// normalised is what decoding the JSON of e gives back: every string with
// each byte that is not valid UTF-8 replaced by U+FFFD, an empty Argv as nil
// (omitempty), as are the empty lists of ProtectedChanged and Confinement,
// and Time and Since zero (compared apart, as instants).
func normalised(e Entry) Entry {
	mapStrings(reflect.ValueOf(&e).Elem(), func(s string) string { return string([]rune(s)) })
	if len(e.Argv) == 0 {
		e.Argv = nil
	}
	if len(e.ProtectedChanged) == 0 {
		e.ProtectedChanged = nil
	}
	if e.Confinement != nil {
		c := *e.Confinement
		if len(c.Writes) == 0 {
			c.Writes = nil
		}
		if len(c.Dropped) == 0 {
			c.Dropped = nil
		}
		e.Confinement = &c
	}
	e.Time, e.Since = time.Time{}, time.Time{}
	if e.Changes != nil && e.Changes.Cover != nil {
		c := *e.Changes
		cover := *c.Cover
		// Times decode as the same instant in another zone; an empty
		// Skipped is omitted.
		cover.From, cover.To = cover.From.UTC(), cover.To.UTC()
		if len(cover.Skipped) == 0 {
			cover.Skipped = nil
		}
		c.Cover = &cover
		e.Changes = &c
	}
	return e
}

// mapStrings replaces every string reachable from v (fields, pointed-to
// structs, slice elements) by f of it, copying what it changes so the
// original value's pointers and slices are left alone.
func mapStrings(v reflect.Value, f func(string) string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(f(v.String()))
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			return
		}
		for i := range v.NumField() {
			mapStrings(v.Field(i), f)
		}
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(v.Elem())
		mapStrings(p.Elem(), f)
		v.Set(p)
	case reflect.Slice:
		if v.IsNil() {
			return
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(c, v)
		for i := range c.Len() {
			mapStrings(c.Index(i), f)
		}
		v.Set(c)
	}
}

// checkAgainstOracle fails tb unless Marshal(e) gives exactly the former
// encoding's bytes (or both fail), the line holds no raw control or
// NeedsEscape character, and it decodes back to e.
func checkAgainstOracle(tb testing.TB, e Entry) {
	tb.Helper()
	got, err := Marshal(e)
	want, wantErr := oracleMarshal(e)
	if (err != nil) != (wantErr != nil) {
		tb.Fatalf("Marshal error %v, json.Marshal error %v, for %#v", err, wantErr, e)
	}
	if err != nil {
		return
	}
	if string(got) != string(want) {
		tb.Fatalf("Marshal differs from the former encoding for %#v:\ngot  %s\nwant %s", e, got, want)
	}
	body := string(got[:len(got)-1])
	for _, r := range body {
		if display.NeedsEscape(r) {
			tb.Fatalf("line holds %U literally: %s", r, got)
		}
	}
	var back Entry
	if err := json.Unmarshal(got, &back); err != nil {
		tb.Fatalf("line does not decode: %v\n%s", err, got)
	}
	if !back.Time.Equal(e.Time) || !back.Since.Equal(e.Since) {
		tb.Fatalf("times %v, %v decoded as %v, %v", e.Time, e.Since, back.Time, back.Since)
	}
	if wantBack := normalised(e); !reflect.DeepEqual(normalised(back), wantBack) {
		tb.Fatalf("decoded entry differs:\ngot  %#v\nwant %#v", normalised(back), wantBack)
	}
}

func TestMarshalMatchesFormerEncoding(t *testing.T) {
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 0x5eed))
		for range 2500 {
			checkAgainstOracle(t, randomEntry(t, rng, seed%2 == 1))
		}
	}
}

func TestMarshalEdgeEntries(t *testing.T) {
	zero, minusOne := 0, -1
	for _, e := range []Entry{
		{},
		{Kind: KindProposal, Argv: []string{}},
		{Kind: KindRunEnd, ExitCode: &zero, PeerUID: &minusOne},
		{Kind: KindRunEnd, Changes: &runinfo.ChangeSummary{}},
		{Kind: KindDecision, Decision: DecisionApproved, By: "card", WithoutWriteConfinement: true},
		{Kind: KindRunStart, Confinement: &runinfo.Confinement{}},
		{Kind: KindRunStart, Confinement: &runinfo.Confinement{Writes: []string{"project", "temp", "cache", "~/.npm\u202e"},
			Dropped: []string{"~/ (it contains <x>)"}, Protected: "read-only", Network: "none", NetworkBy: "namespace", Landlock: 7, Scoped: true}},
		{Kind: KindRunStart, Confinement: &runinfo.Confinement{Unconfined: "approved without write confinement", Network: "any"}},
		{Kind: KindRunEnd, ProtectedChanged: []string{"created .mcp.json", "changed .git/config"}},
		{Kind: KindRunEnd, Changes: &runinfo.ChangeSummary{Created: []string{}, Modified: []string{}, Deleted: []string{}, Incomplete: true, Reason: "<why>", Method: "content-hash"}},
		{Kind: KindRunChanges, Changes: &runinfo.ChangeSummary{Created: []string{"a"}, Method: "content-hash", Cover: &runinfo.ChangeCover{}}},
		{Kind: KindRunChanges, Changes: &runinfo.ChangeSummary{Cover: &runinfo.ChangeCover{Entries: 100000, Skipped: []string{"s/ (permission denied)"},
			From: time.Date(2026, 11, 30, 10, 15, 0, 120_000_000, time.UTC), To: time.Date(2026, 11, 30, 10, 15, 1, 0, time.UTC), Watched: true}}},
		{Kind: KindDecision, Rule: &Rule{}},
		{Kind: KindDecision, Grant: &Grant{}},
		{Kind: KindDecision, Decision: DecisionGrant, Grant: &Grant{ID: "g-0123abcd", Kind: "exact", Text: "git status", By: "card", UntilQuit: true, LeftMS: 720000}},
		{Kind: KindDecision, Rule: &Rule{Text: "git status", Scope: "provider", Provider: "claude-code", File: "/a b/allow.list", Line: -3}},
		{Time: time.Date(2026, 11, 30, 10, 15, 0, 120_000_000, time.UTC), Kind: "odd\u202ekind\x00"},
		{Time: time.Date(0, 1, 1, 0, 0, 0, 1, time.FixedZone("", 90*60))},
		{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 24*3600))},
	} {
		checkAgainstOracle(t, e)
	}
}

func TestMarshalOutOfRangeTimeFails(t *testing.T) {
	_, err := Marshal(Entry{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err == nil || !strings.Contains(err.Error(), "year outside of range") {
		t.Fatalf("err = %v, want a year-out-of-range error", err)
	}
}

// FuzzMarshal checks Marshal against the former encoding for entries whose
// strings come from the fuzzer.
func FuzzMarshal(f *testing.F) {
	f.Add("git status", "/home/ada\u202e", "\xff\x00<&>", int64(0))
	f.Add("", "\U000E0041\u2028", `"\`, int64(-1))
	f.Fuzz(func(t *testing.T, a, b, c string, n int64) {
		code := int(n)
		checkAgainstOracle(t, Entry{
			Time: time.Unix(0, n%(1<<62)).UTC(), Kind: Kind(a), RunID: b, Argv: []string{a, b, c}, CommandLine: c,
			ExitCode: &code, Rule: &Rule{Text: c, Scope: a, Provider: b, File: c, Line: code},
			Changes: &runinfo.ChangeSummary{Created: []string{c}, Modified: []string{}, Reason: a, Method: b, Incomplete: n%2 == 0},
		})
	})
}
