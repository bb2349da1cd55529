package sfv

import "strings"

// A scanner reads the text of one field line, from s[i], keeping the
// parameters keep names.
type scanner struct {
	s    string
	i    int
	keep Keep
}

func (s *scanner) skipSP() {
	for s.i < len(s.s) && s.s[s.i] == ' ' {
		s.i++
	}
}

func (s *scanner) skipOWS() {
	for s.i < len(s.s) && (s.s[s.i] == ' ' || s.s[s.i] == '\t') {
		s.i++
	}
}

// next moves past the comma between members (§4.2.1): it reports done at
// the end of input and fails on anything but a comma followed by a member.
func (s *scanner) next() (done, ok bool) {
	s.skipOWS()
	if s.i == len(s.s) {
		return true, true
	}
	if s.s[s.i] != ',' {
		return false, false
	}
	s.i++
	s.skipOWS()
	return false, s.i < len(s.s) // a trailing comma fails
}

// key parses a Key (§4.2.3.3).
func (s *scanner) key() (string, bool) {
	start := s.i
	if start == len(s.s) || !(s.s[start] >= 'a' && s.s[start] <= 'z' || s.s[start] == '*') {
		return "", false
	}
	i := start + 1
	for i < len(s.s) && chars[s.s[i]]&keyChar != 0 {
		i++
	}
	s.i = i
	return s.s[start:i], true
}

// chars classifies the bytes of keys, tokens and strings.
var chars = func() (t [256]uint8) {
	for c := range 256 {
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("_-.*", byte(c)) >= 0 {
			t[c] |= keyChar
		}
		if isAlpha(byte(c)) || isDigit(byte(c)) || strings.IndexByte("!#$%&'*+-.^_`|~:/", byte(c)) >= 0 {
			t[c] |= tokenChar
		}
		if 0x20 <= c && c <= 0x7e && c != '"' && c != '\\' {
			t[c] |= stringChar
		}
	}
	return t
}()

const (
	keyChar    = 1 << iota // lcalpha, DIGIT, "_", "-", ".", "*" (§3.1.2)
	tokenChar              // tchar, ":" and "/" (§3.3.4)
	stringChar             // unescaped in a String: printable ASCII but DQUOTE and "\\" (§3.3.3)
)

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isAlpha(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// bare parses a Bare Item (§4.2.3.1).
func (s *scanner) bare() (Bare, bool) {
	if s.i == len(s.s) {
		return Bare{}, false
	}
	switch c := s.s[s.i]; {
	case c == '-' || isDigit(c):
		return s.number()
	case c == '"':
		return s.string()
	case c == '*' || isAlpha(c):
		return s.token()
	case c == ':':
		return s.bytes()
	case c == '?':
		if s.i+1 < len(s.s) && (s.s[s.i+1] == '0' || s.s[s.i+1] == '1') {
			s.i += 2
			return Bare{Kind: Boolean, Num: float64(s.s[s.i-1] - '0')}, true
		}
	case c == '@':
		s.i++
		if b, ok := s.number(); ok && b.Kind == Integer {
			return Bare{Kind: Date, Num: b.Num}, true
		}
	case c == '%':
		return s.displayString()
	}
	return Bare{}, false
}

// number parses an Integer (at most 15 digits) or a Decimal (at most 12
// integer and 1 to 3 fractional digits), §4.2.4. It works on a copy of the
// scanner's text and position, which the compiler keeps in registers
// (BenchmarkList).
func (s *scanner) number() (Bare, bool) {
	str, i := s.s, s.i
	neg := i < len(str) && str[i] == '-'
	if neg {
		i++
	}
	start, end := i, min(len(str), i+16)
	var n int64
	for ; i < end; i++ {
		d := str[i] - '0'
		if d > 9 {
			break
		}
		n = n*10 + int64(d)
	}
	digits := i - start
	if digits == 0 || digits > 15 {
		return Bare{}, false
	}
	b := Bare{Kind: Integer, Num: float64(n)}
	if i < len(str) && str[i] == '.' {
		if digits > 12 {
			return Bare{}, false
		}
		i++
		var frac int64
		scale := 1
		for ; i < len(str) && isDigit(str[i]); i++ {
			if scale == 1000 {
				return Bare{}, false
			}
			frac = frac*10 + int64(str[i]-'0')
			scale *= 10
		}
		if scale == 1 {
			return Bare{}, false
		}
		b = Bare{Kind: Decimal, Num: float64(n) + float64(frac)/float64(scale)}
	}
	if neg {
		b.Num = -b.Num
	}
	s.i = i
	return b, true
}

// string parses a String (§4.2.5).
func (s *scanner) string() (Bare, bool) {
	start := s.i + 1
	escaped := false
	for i := start; i < len(s.s); i++ {
		c := s.s[i]
		if chars[c]&stringChar != 0 {
			continue
		}
		switch {
		case c == '"':
			s.i = i + 1
			return Bare{Kind: String, Str: s.s[start:i], Escaped: escaped}, true
		case c == '\\':
			i++
			if i == len(s.s) || s.s[i] != '"' && s.s[i] != '\\' {
				return Bare{}, false
			}
			escaped = true
		default: // a control character or a byte beyond ASCII
			return Bare{}, false
		}
	}
	return Bare{}, false
}

// token parses a Token (§4.2.6).
func (s *scanner) token() (Bare, bool) {
	start := s.i
	s.i++
	for s.i < len(s.s) && chars[s.s[s.i]]&tokenChar != 0 {
		s.i++
	}
	return Bare{Kind: Token, Str: s.s[start:s.i]}, true
}

// bytes parses a Byte Sequence (§4.2.7); its content is not kept.
func (s *scanner) bytes() (Bare, bool) {
	for s.i++; s.i < len(s.s); s.i++ {
		c := s.s[s.i]
		if c == ':' {
			s.i++
			return Bare{Kind: ByteSequence}, true
		}
		if !(isDigit(c) || isAlpha(c) || c == '+' || c == '/' || c == '=') {
			return Bare{}, false
		}
	}
	return Bare{}, false
}

// displayString parses a Display String (§4.2.10); its content is not
// kept.
func (s *scanner) displayString() (Bare, bool) {
	if s.i+1 >= len(s.s) || s.s[s.i+1] != '"' {
		return Bare{}, false
	}
	isHex := func(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' }
	for s.i += 2; s.i < len(s.s); s.i++ {
		switch c := s.s[s.i]; {
		case c == '%':
			if s.i+2 >= len(s.s) || !isHex(s.s[s.i+1]) || !isHex(s.s[s.i+2]) {
				return Bare{}, false
			}
			s.i += 2
		case c == '"':
			s.i++
			return Bare{Kind: DisplayString}, true
		case c < 0x20 || c > 0x7e:
			return Bare{}, false
		}
	}
	return Bare{}, false
}
