package sfv

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type parseTest struct {
	in   string
	n    int // members, or -1 for a parse failure
	dict bool
}

// parseTests are RFC 9651 §4.2's rules, one or two rows each.
var parseTests = []parseTest{
	{"", 0, false},
	{`"a";q=1`, 1, false},
	{`a, b;x, c;y=?0`, 3, false},
	{`1, -2, 3.5, 4.125`, 4, false},
	{`1.1234`, -1, false},
	{`1234567890123.1`, -1, false},
	{`123456789012.1`, 1, false},
	{`123456789012345`, 1, false},
	{`1234567890123456`, -1, false},
	{`-`, -1, false},
	{`1.`, -1, false},
	{`(a b "c");p=1, d`, 2, false},
	{`()`, 1, false},
	{`(a b`, -1, false},
	{`(a,b)`, -1, false},
	{`:cHJldGVuZCB0aGlzIGlzIGJpbmFyeSBjb250ZW50Lg==:`, 1, false},
	{`:abc`, -1, false},
	{`@1659578233, %"f%c3%bc"`, 2, false},
	{`@1.5`, -1, false},
	{`@`, -1, false}, // read past the end once (FuzzParse)
	{`a;x=@`, -1, false},
	{`%"%C3"`, -1, false},
	{`%"a`, -1, false},
	{`"a\"b\\c"`, 1, false},
	{`"a\nb"`, -1, false},
	{"\"a\x7fb\"", -1, false},
	{`"open`, -1, false},
	{`a,`, -1, false},
	{`a,,b`, -1, false},
	{`a b`, -1, false},
	{`a;Q=1`, -1, false},
	{`a; q=1`, 1, false},
	{`a;q=`, -1, false},
	{`?2`, -1, false},
	{`?1, ?0`, 2, false},
	{`a;q=1 ,  b`, 2, false},
	{"a;q=1\t,\tb", 2, false},
	{`*a:b/c, &`, -1, false},
	{`*a:b/c`, 1, false},
	{`limit=100, remaining=50, reset=5`, 3, true},
	{`a=1, a=2`, 1, true},
	{`a, b;x=1, c=(1 2)`, 3, true},
	{`A=1`, -1, true},
	{`a=`, -1, true},
	{`a=1,`, -1, true},
	{`a=1 b=2`, -1, true},
}

func TestParse(t *testing.T) {
	for _, tt := range parseTests {
		var n int
		var ok bool
		if tt.dict {
			var got []Member
			got, ok = Dict([]string{tt.in}, KeepNone, got, 32)
			n = len(got)
		} else {
			var got []Item
			got, ok = List([]string{tt.in}, KeepNone, got, 32)
			n = len(got)
		}
		if tt.n < 0 {
			assert.Falsef(t, ok, "parse(%q) succeeded, want failure", tt.in)
		} else {
			assert.Truef(t, ok, "parse(%q) failed", tt.in)
			assert.Equalf(t, tt.n, n, "parse(%q) members", tt.in)
		}
	}
}

func TestBareValues(t *testing.T) {
	items, ok := List([]string{`42, -1.5, "a\"b", tok/en, ?1, @-5, :AQ==:, %"x", (1 2)`}, KeepNone, nil, 32)
	require.True(t, ok)
	want := []Bare{
		{Kind: Integer, Num: 42}, {Kind: Decimal, Num: -1.5}, {Kind: String, Str: `a\"b`, Escaped: true},
		{Kind: Token, Str: "tok/en"}, {Kind: Boolean, Num: 1}, {Kind: Date, Num: -5},
		{Kind: ByteSequence}, {Kind: DisplayString}, {Kind: InnerList},
	}
	require.Len(t, items, len(want))
	for i, w := range want {
		assert.Equalf(t, w, items[i].Bare, "member %d", i)
	}
	for _, tt := range []struct {
		b    Bare
		want string
		ok   bool
	}{
		{items[2].Bare, `a"b`, true},
		{Bare{Kind: String, Str: `x\\y`, Escaped: true}, `x\y`, true},
		{Bare{Kind: String, Str: "plain"}, "plain", true},
		{items[3].Bare, "tok/en", true},
		{items[0].Bare, "", false},
	} {
		got, ok := tt.b.Text()
		assert.Truef(t, got == tt.want && ok == tt.ok, "%+v.Text() = %q, %v, want %q, %v", tt.b, got, ok, tt.want, tt.ok)
	}
}

// keepXYW keeps x, y and w at 0, 1 and 2.
func keepXYW(key string) int {
	switch key {
	case "x":
		return 0
	case "y":
		return 1
	case "w":
		return 2
	}
	return -1
}

// TestParams: Params[i] holds the last value of the parameter keep puts at
// i, other parameters and those of an inner list's members are dropped, and
// a Dictionary's repeated key keeps its place with the last value.
func TestParams(t *testing.T) {
	items, ok := List([]string{`a;x=1;y=2;z=7;x=3, (b;x=9 c);w=4, d;y`}, keepXYW, nil, 32)
	require.True(t, ok)
	require.Len(t, items, 3)
	assert.Equal(t, [MaxParams]Bare{{Kind: Integer, Num: 3}, {Kind: Integer, Num: 2}}, items[0].Params)
	assert.Equal(t, [MaxParams]Bare{2: {Kind: Integer, Num: 4}}, items[1].Params)
	assert.Equal(t, [MaxParams]Bare{1: {Kind: Boolean, Num: 1}}, items[2].Params)

	d, ok := Dict([]string{`a=1;x=1, b, a=2;x=2`}, keepXYW, nil, 32)
	require.True(t, ok)
	require.Len(t, d, 2)
	assert.Equal(t, "a", d[0].Key)
	assert.Equal(t, float64(2), d[0].Item.Bare.Num)
	assert.Equal(t, Bare{Kind: Integer, Num: 2}, d[0].Item.Params[0])
	assert.Equal(t, Bare{Kind: Boolean, Num: 1}, d[1].Item.Bare)

	items, ok = List([]string{`a;k=1`}, func(string) int { return MaxParams }, nil, 32)
	require.True(t, ok)
	assert.Equal(t, [MaxParams]Bare{}, items[0].Params, "an index past MaxParams drops the parameter")
}

// TestLines: field lines are one List, a bad line fails the field, and
// members past max are validated but not kept.
func TestLines(t *testing.T) {
	items, ok := List([]string{" a, b ", "", "c"}, KeepNone, nil, 32)
	assert.True(t, ok)
	assert.Len(t, items, 3)
	_, ok = List([]string{"a", "b,"}, KeepNone, nil, 32)
	assert.False(t, ok)
	items, ok = List([]string{strings.Repeat("a, ", 99) + "a"}, KeepNone, nil, 5)
	assert.True(t, ok)
	assert.Len(t, items, 5)
	_, ok = List([]string{strings.Repeat("a, ", 99) + "\"a"}, KeepNone, nil, 5)
	assert.False(t, ok, "a bad member past max fails the field")
	d, ok := Dict([]string{"a=1, b=2", "c=3, a=4"}, KeepNone, nil, 2)
	assert.True(t, ok)
	assert.Len(t, d, 2, "c dropped past max")
	assert.Equal(t, float64(4), d[0].Item.Bare.Num, "a repeated key updated past max")
}

func TestAllocs(t *testing.T) {
	lines := []string{`"burst";q=100;w=60, "daily";q=1000;w=86400`}
	var buf [4]Item
	allocs := testing.AllocsPerRun(100, func() { List(lines, keepXYW, buf[:0], 32) })
	assert.Zero(t, allocs, "List allocates")
}

// FuzzParse checks that parsing never panics, keeps at most max members,
// that a List that parses still parses, one member longer, with a member
// appended on a line of its own, and that Strings and Tokens are the
// field's text.
func FuzzParse(f *testing.F) {
	for _, tt := range parseTests {
		f.Add(tt.in, tt.dict)
	}
	keys := keepXYW
	f.Fuzz(func(t *testing.T, in string, dict bool) {
		if dict {
			d, ok := Dict([]string{in}, keys, nil, 4)
			if len(d) > 4 {
				t.Fatalf("Dict(%q) kept %d members, want at most 4", in, len(d))
			}
			for _, m := range d {
				if ok && m.Key == "" {
					t.Fatalf("Dict(%q) has a member with no key", in)
				}
			}
			return
		}
		items, ok := List([]string{in}, keys, nil, 64)
		if len(items) > 64 {
			t.Fatalf("List(%q) kept %d members, want at most 64", in, len(items))
		}
		if !ok {
			return
		}
		more, ok := List([]string{in, `x;x=1`}, keys, nil, 64)
		if !ok || len(items) < 64 && len(more) != len(items)+1 {
			t.Fatalf("List(%q, x;x=1) = %d members, %v; want %d, true", in, len(more), ok, len(items)+1)
		}
		if last := more[len(more)-1]; len(items) < 64 && last.Params[0] != (Bare{Kind: Integer, Num: 1}) {
			t.Fatalf("List(%q, x;x=1): the appended member has x=%+v", in, last.Params[0])
		}
		for _, it := range items {
			for _, b := range append([]Bare{it.Bare}, it.Params[:]...) {
				if (b.Kind == String || b.Kind == Token) && !strings.Contains(in, b.Str) {
					t.Fatalf("List(%q): %q is not the field's text", in, b.Str)
				}
			}
		}
	})
}
