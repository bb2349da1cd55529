// Package sfv parses the Lists and Dictionaries of RFC 9651, Structured
// Field Values for HTTP, strictly and without allocating.
//
// Every bare item type is recognised, so that a valid field is never
// rejected, but only Integers, Decimals, Dates, Booleans, Strings and Tokens
// carry values out: Byte Sequences, Display Strings and the members of Inner
// Lists are validated and dropped. Items refer to the field's text and keep
// the Parameters the caller names, so that they stay small enough for the
// caller's stack.
package sfv

import (
	"slices"
	"strings"
)

// A Kind is the type of a bare item (§3.3), or InnerList.
type Kind uint8

const (
	None Kind = iota
	Integer
	Decimal
	String
	Token
	ByteSequence
	Boolean
	Date
	DisplayString
	InnerList
)

// A Bare is a bare item (§3.3). Num holds an Integer, a Decimal or a Date,
// and a Boolean as 0 or 1. Str holds a Token, or the text of a String
// between its quotes with its escapes in place (Escaped says whether there
// are any; see [Bare.Text]).
type Bare struct {
	Kind    Kind
	Escaped bool
	Num     float64
	Str     string
}

// Text returns the text of a String, unescaped, or of a Token. It
// allocates only for a String that holds escapes.
func (b Bare) Text() (string, bool) {
	switch {
	case b.Kind == Token || b.Kind == String && !b.Escaped:
		return b.Str, true
	case b.Kind == String:
		return unescape(b.Str), true
	}
	return "", false
}

// unescape returns the text of a String whose escapes the parser checked:
// each backslash is followed by '"' or '\\'.
func unescape(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// MaxParams is how many Parameters an Item keeps.
const MaxParams = 3

// An Item is an Item or an Inner List (§3.1.1) and the Parameters its
// parser was told to keep: Params[i] holds the value of the parameter the
// parser's keep function (see [List]) puts at i, the last one when the key
// is repeated (§4.2.3.2), the zero Bare (Kind None) when the Item has
// none.
type Item struct {
	Bare   Bare
	Params [MaxParams]Bare
}

// A Keep function names the parameters to keep: it returns where in
// Item.Params to keep the parameter called key, or -1 to drop it. A
// function with a switch on constant keys is quicker than any lookup in a
// list of keys (BenchmarkParseHeadersIETFStructured in the parent package).
type Keep func(key string) int

// KeepNone keeps no parameter.
func KeepNone(string) int { return -1 }

// A Member is a member of a Dictionary (§3.2).
type Member struct {
	Key  string
	Item Item
}

// List parses the field lines of a List field as one List (§4.2: lines are
// combined with commas), appending to out its members while out is shorter
// than max; later members are validated but not kept. Each Item keeps the
// parameters keep names. List reports false, and the field is to be
// ignored as a whole, if any line fails to parse.
func List(lines []string, keep Keep, out []Item, max int) ([]Item, bool) {
	var skipped Item // a member past max, validated and dropped
	for _, line := range lines {
		s := scanner{s: trimOWS(line), keep: keep}
		for s.i < len(s.s) {
			it := &skipped
			if len(out) < max {
				out = append(out, Item{})
				it = &out[len(out)-1] // parsed in place: an Item is large
			} else {
				skipped = Item{}
			}
			if !s.itemOrInnerList(it) {
				return out, false
			}
			if done, ok := s.next(); done || !ok {
				if !ok {
					return out, false
				}
				break
			}
		}
	}
	return out, true
}

// Dict is List for a Dictionary (§4.2.2). A repeated key keeps its place
// and takes the last value.
func Dict(lines []string, keep Keep, out []Member, max int) ([]Member, bool) {
	for _, line := range lines {
		s := scanner{s: trimOWS(line), keep: keep}
		for s.i < len(s.s) {
			k, ok := s.key()
			if !ok {
				return out, false
			}
			var it Item
			if s.i < len(s.s) && s.s[s.i] == '=' {
				s.i++
				if !s.itemOrInnerList(&it) {
					return out, false
				}
			} else {
				it.Bare = Bare{Kind: Boolean, Num: 1}
				if !s.params(&it.Params, s.keep) {
					return out, false
				}
			}
			if i := slices.IndexFunc(out, func(m Member) bool { return m.Key == k }); i >= 0 {
				out[i].Item = it
			} else if len(out) < max {
				out = append(out, Member{k, it})
			}
			if done, ok := s.next(); done || !ok {
				if !ok {
					return out, false
				}
				break
			}
		}
	}
	return out, true
}

// itemOrInnerList parses an Item or an Inner List (§4.2.1.1) into *it,
// which must be zero.
func (s *scanner) itemOrInnerList(it *Item) bool {
	if s.i == len(s.s) || s.s[s.i] != '(' {
		return s.item(it, s.keep)
	}
	s.i++
	for {
		s.skipSP()
		if s.i == len(s.s) {
			return false
		}
		if s.s[s.i] == ')' {
			s.i++
			it.Bare = Bare{Kind: InnerList}
			return s.params(&it.Params, s.keep)
		}
		var inner Item // validated, not kept
		if !s.item(&inner, KeepNone) {
			return false
		}
		if s.i == len(s.s) || s.s[s.i] != ' ' && s.s[s.i] != ')' {
			return false
		}
	}
}

// item parses an Item (§4.2.3) into *it, which must be zero, keeping the
// parameters keep names.
func (s *scanner) item(it *Item, keep Keep) bool {
	var ok bool
	if it.Bare, ok = s.bare(); !ok {
		return false
	}
	return s.params(&it.Params, keep)
}

// params parses Parameters (§4.2.3.2) into ps, as keep says.
func (s *scanner) params(ps *[MaxParams]Bare, keep Keep) bool {
	for s.i < len(s.s) && s.s[s.i] == ';' {
		s.i++
		s.skipSP()
		k, ok := s.key()
		if !ok {
			return false
		}
		b := Bare{Kind: Boolean, Num: 1}
		if s.i < len(s.s) && s.s[s.i] == '=' {
			s.i++
			if b, ok = s.bare(); !ok {
				return false
			}
		}
		if i := keep(k); uint(i) < uint(len(ps)) {
			ps[i] = b
		}
	}
	return true
}

// trimOWS removes the spaces and tabs around s.
func trimOWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}
