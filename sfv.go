package throttle

import (
	"slices"
	"strings"
	"time"
)

// A small, strict parser for the parts of RFC 9651 (Structured Field Values
// for HTTP) the IETF RateLimit fields use: Lists and Dictionaries of Items
// with Parameters. Every bare item type is recognised so that a valid field
// is never rejected, but only Integers, Decimals, Strings and Tokens carry
// values out. The parser does not allocate: items refer to the field text,
// and parameters stay as validated text, looked up on demand.

type sfKind uint8

const (
	sfNone sfKind = iota
	sfInteger
	sfDecimal
	sfString
	sfToken
	sfBytes
	sfBoolean
	sfDate
	sfDisplayString
	sfInnerList
)

// sfBare is a bare item. For Strings, str is the text between the quotes
// with its escapes still in place.
type sfBare struct {
	kind sfKind
	esc  bool    // str holds backslash escapes
	num  float64 // Integer, Decimal, Date
	str  string  // String, Token
}

// sfItem is an Item or Inner List and its Parameters.
type sfItem struct {
	bare   sfBare
	params sfParams
}

// sfParams holds the Parameters the RateLimit fields define: q (quota), w
// (window), r (remaining) and t (seconds to reset) as numbers, and whether qu
// (quota unit) says "requests". The last of a repeated key wins (RFC 9651
// §4.2.3.2); other keys are validated and dropped. An absent number is the
// zero sfNum (kind sfNone).
type sfParams struct {
	q, w, r, t sfNum
	qu         sfUnit
}

// sfNum is the numeric part of a bare item, which is all a parameter other
// than qu needs: an item holds five parameters, so they are kept small.
type sfNum struct {
	kind sfKind
	num  float64
}

// sfUnit is what a qu parameter says.
type sfUnit uint8

const (
	quNone     sfUnit = iota // absent, or not a String or Token
	quRequests               // "requests"
	quOther                  // another unit: tokens, bytes, ...
)

func (ps *sfParams) set(key string, b sfBare) {
	n := sfNum{b.kind, b.num}
	switch key {
	case "q":
		ps.q = n
	case "w":
		ps.w = n
	case "r":
		ps.r = n
	case "t":
		ps.t = n
	case "qu":
		switch {
		case b.kind != sfString && b.kind != sfToken:
			ps.qu = quNone
		case b.str == "requests":
			ps.qu = quRequests
		default:
			ps.qu = quOther
		}
	}
}

type sfMember struct {
	key  string
	item sfItem
}

// name returns the policy name a String or Token holds.
func (b sfBare) name() (string, bool) {
	switch b.kind {
	case sfToken:
		return b.str, true
	case sfString:
		if !b.esc {
			return b.str, true
		}
		var sb strings.Builder
		for i := 0; i < len(b.str); i++ {
			if b.str[i] == '\\' {
				i++
			}
			sb.WriteByte(b.str[i])
		}
		return sb.String(), true
	}
	return "", false
}

// count returns a non-negative Integer or Decimal.
func (n sfNum) count() (float64, bool) {
	if (n.kind == sfInteger || n.kind == sfDecimal) && n.num >= 0 {
		return n.num, true
	}
	return 0, false
}

// seconds returns a non-negative Integer number of seconds as a Duration.
func (n sfNum) seconds() (time.Duration, bool) {
	if n.kind != sfInteger || n.num < 0 {
		return 0, false
	}
	return scaleDuration(uint64(n.num), 0, time.Second)
}

// count returns a non-negative Integer or Decimal.
func (b sfBare) count() (float64, bool) { return sfNum{b.kind, b.num}.count() }

// window returns the w parameter: a positive Integer number of seconds.
func (it *sfItem) window() (time.Duration, bool) {
	w, ok := it.params.w.seconds()
	return w, ok && w > 0
}

// sfListLines parses the field lines of a List field as one List (RFC 9651
// §4.2: lines are combined with commas), appending its members to out. It
// reports false, and the field is to be ignored, if any line fails. Members
// past maxMembers are validated but not kept.
func sfListLines(lines []string, out []sfItem) ([]sfItem, bool) {
	for _, line := range lines {
		p := sfParser{s: trimOWS(line)}
		var ok bool
		if out, ok = p.list(out); !ok {
			return out, false
		}
	}
	return out, true
}

// sfDictLines is sfListLines for a Dictionary. A repeated key keeps the last
// value (§4.2.2).
func sfDictLines(lines []string, out []sfMember) ([]sfMember, bool) {
	for _, line := range lines {
		p := sfParser{s: trimOWS(line)}
		var ok bool
		if out, ok = p.dict(out); !ok {
			return out, false
		}
	}
	return out, true
}

type sfParser struct {
	s string
	i int
}

func (p *sfParser) skipSP() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *sfParser) skipOWS() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// next moves past the comma between members (§4.2.1): it reports done at
// the end of input and fails on anything but a comma followed by a member.
func (p *sfParser) next() (done, ok bool) {
	p.skipOWS()
	if p.i == len(p.s) {
		return true, true
	}
	if p.s[p.i] != ',' {
		return false, false
	}
	p.i++
	p.skipOWS()
	return false, p.i < len(p.s) // a trailing comma fails
}

// list parses a List (§4.2.1). Members are parsed in place: an item is
// too large to copy around.
func (p *sfParser) list(out []sfItem) ([]sfItem, bool) {
	for p.i < len(p.s) {
		var it *sfItem
		if len(out) < maxMembers {
			out = append(out, sfItem{})
			it = &out[len(out)-1]
		} else {
			var skipped sfItem // validated, not kept
			it = &skipped
		}
		if !p.itemOrInnerList(it) {
			return out, false
		}
		if done, ok := p.next(); done || !ok {
			return out, ok
		}
	}
	return out, true
}

// dict parses a Dictionary (§4.2.2).
func (p *sfParser) dict(out []sfMember) ([]sfMember, bool) {
	for p.i < len(p.s) {
		k, ok := p.key()
		if !ok {
			return out, false
		}
		var it sfItem
		if p.i < len(p.s) && p.s[p.i] == '=' {
			p.i++
			if !p.itemOrInnerList(&it) {
				return out, false
			}
		} else {
			it.bare = sfBare{kind: sfBoolean, num: 1}
			if !p.params(&it.params) {
				return out, false
			}
		}
		if i := slices.IndexFunc(out, func(m sfMember) bool { return m.key == k }); i >= 0 {
			out[i].item = it
		} else if len(out) < maxMembers {
			out = append(out, sfMember{k, it})
		}
		if done, ok := p.next(); done || !ok {
			return out, ok
		}
	}
	return out, true
}

// itemOrInnerList parses an Item or an Inner List (§4.2.1.1) into *it,
// which must be zero.
func (p *sfParser) itemOrInnerList(it *sfItem) bool {
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i++
		var inner sfItem
		for {
			p.skipSP()
			if p.i == len(p.s) {
				return false
			}
			if p.s[p.i] == ')' {
				p.i++
				it.bare = sfBare{kind: sfInnerList}
				return p.params(&it.params)
			}
			inner = sfItem{}
			if !p.item(&inner) {
				return false
			}
			if p.i == len(p.s) || p.s[p.i] != ' ' && p.s[p.i] != ')' {
				return false
			}
		}
	}
	return p.item(it)
}

// item parses an Item (§4.2.3) into *it, which must be zero.
func (p *sfParser) item(it *sfItem) bool {
	var ok bool
	if it.bare, ok = p.bare(); !ok {
		return false
	}
	return p.params(&it.params)
}

// params parses Parameters (§4.2.3.2) into *ps, which must be zero, keeping
// the ones sfParams holds.
func (p *sfParser) params(ps *sfParams) bool {
	for p.i < len(p.s) && p.s[p.i] == ';' {
		p.i++
		p.skipSP()
		k, ok := p.key()
		if !ok {
			return false
		}
		b := sfBare{kind: sfBoolean, num: 1}
		if p.i < len(p.s) && p.s[p.i] == '=' {
			p.i++
			if b, ok = p.bare(); !ok {
				return false
			}
		}
		ps.set(k, b)
	}
	return true
}

// key parses a Key (§4.2.3.3).
func (p *sfParser) key() (string, bool) {
	s, start := p.s, p.i
	if start == len(s) || !(s[start] >= 'a' && s[start] <= 'z' || s[start] == '*') {
		return "", false
	}
	i := start + 1
	for i < len(s) && sfChars[s[i]]&sfKeyChar != 0 {
		i++
	}
	p.i = i
	return s[start:i], true
}

// sfChars classifies the bytes of keys, tokens and strings.
var sfChars = func() (t [256]uint8) {
	for c := range 256 {
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("_-.*", byte(c)) >= 0 {
			t[c] |= sfKeyChar
		}
		if 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~:/", byte(c)) >= 0 {
			t[c] |= sfTokenChar
		}
		if 0x20 <= c && c <= 0x7e && c != '"' && c != '\\' {
			t[c] |= sfStringChar
		}
	}
	return t
}()

const (
	sfKeyChar    = 1 << iota // lcalpha, DIGIT, "_", "-", ".", "*" (§3.1.2)
	sfTokenChar              // tchar, ":" and "/" (§3.3.4)
	sfStringChar             // unescaped in a String: printable ASCII but DQUOTE and "\\" (§3.3.3)
)

// bare parses a Bare Item (§4.2.3.1).
func (p *sfParser) bare() (sfBare, bool) {
	if p.i == len(p.s) {
		return sfBare{}, false
	}
	switch c := p.s[p.i]; {
	case c == '-' || isDigit(c):
		return p.number()
	case c == '"':
		return p.string()
	case c == '*' || isAlpha(c):
		return p.token()
	case c == ':':
		return p.bytes()
	case c == '?':
		if p.i+1 < len(p.s) && (p.s[p.i+1] == '0' || p.s[p.i+1] == '1') {
			p.i += 2
			return sfBare{kind: sfBoolean, num: float64(p.s[p.i-1] - '0')}, true
		}
	case c == '@':
		p.i++
		if b, ok := p.number(); ok && b.kind == sfInteger {
			return sfBare{kind: sfDate, num: b.num}, true
		}
	case c == '%':
		return p.displayString()
	}
	return sfBare{}, false
}

// number parses an Integer (at most 15 digits) or a Decimal (at most 12
// integer and 1 to 3 fractional digits), §4.2.4.
func (p *sfParser) number() (sfBare, bool) {
	neg := p.i < len(p.s) && p.s[p.i] == '-'
	if neg {
		p.i++
	}
	s, start := p.s, p.i
	i, end := start, min(len(s), start+16)
	var n int64
	for ; i < end; i++ {
		d := s[i] - '0'
		if d > 9 {
			break
		}
		n = n*10 + int64(d)
	}
	digitsRead := i - start
	p.i = i
	if digitsRead == 0 || digitsRead > 15 {
		return sfBare{}, false
	}
	b := sfBare{kind: sfInteger, num: float64(n)}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		if digitsRead > 12 {
			return sfBare{}, false
		}
		p.i++
		var frac int64
		scale := 1
		for ; p.i < len(p.s) && isDigit(p.s[p.i]); p.i++ {
			if scale == 1000 {
				return sfBare{}, false
			}
			frac = frac*10 + int64(p.s[p.i]-'0')
			scale *= 10
		}
		if scale == 1 {
			return sfBare{}, false
		}
		b = sfBare{kind: sfDecimal, num: float64(n) + float64(frac)/float64(scale)}
	}
	if neg {
		b.num = -b.num
	}
	return b, true
}

// string parses a String (§4.2.5).
func (p *sfParser) string() (sfBare, bool) {
	s := p.s
	start := p.i + 1
	esc := false
	for i := start; i < len(s); i++ {
		c := s[i]
		if sfChars[c]&sfStringChar != 0 {
			continue // the usual case, one lookup a byte
		}
		switch {
		case c == '"':
			p.i = i + 1
			return sfBare{kind: sfString, str: s[start:i], esc: esc}, true
		case c == '\\':
			i++
			if i == len(s) || s[i] != '"' && s[i] != '\\' {
				return sfBare{}, false
			}
			esc = true
		case c < 0x20 || c > 0x7e:
			return sfBare{}, false
		}
	}
	return sfBare{}, false
}

// token parses a Token (§4.2.6).
func (p *sfParser) token() (sfBare, bool) {
	s, start := p.s, p.i
	i := start + 1
	for i < len(s) && sfChars[s[i]]&sfTokenChar != 0 {
		i++
	}
	p.i = i
	return sfBare{kind: sfToken, str: s[start:i]}, true
}

// bytes parses a Byte Sequence (§4.2.7); its content is not needed.
func (p *sfParser) bytes() (sfBare, bool) {
	for p.i++; p.i < len(p.s); p.i++ {
		c := p.s[p.i]
		if c == ':' {
			p.i++
			return sfBare{kind: sfBytes}, true
		}
		if !(isDigit(c) || isAlpha(c) || c == '+' || c == '/' || c == '=') {
			return sfBare{}, false
		}
	}
	return sfBare{}, false
}

// displayString parses a Display String (§4.2.10); its content is not needed.
func (p *sfParser) displayString() (sfBare, bool) {
	if p.i+1 >= len(p.s) || p.s[p.i+1] != '"' {
		return sfBare{}, false
	}
	isHex := func(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' }
	for p.i += 2; p.i < len(p.s); p.i++ {
		switch c := p.s[p.i]; {
		case c == '%':
			if p.i+2 >= len(p.s) || !isHex(p.s[p.i+1]) || !isHex(p.s[p.i+2]) {
				return sfBare{}, false
			}
			p.i += 2
		case c == '"':
			p.i++
			return sfBare{kind: sfDisplayString}, true
		case c < 0x20 || c > 0x7e:
			return sfBare{}, false
		}
	}
	return sfBare{}, false
}
