package throttle

import (
	"maps"
	"net/http"
	"slices"
	"strings"
)

// Indexes of the header values a response may carry.
const (
	fDate = iota
	fRetryAfter
	fRetryAfterMs
	fXRetryAfter
	fXLimit
	fXRemaining
	fXReset
	fXUsed
	fXResetAfter
	fXResource
	fXBucket
	fXDLimit
	fXDRemaining
	fXDReset
	fZendeskLimit
	fRL
	fRLPolicy
	fRLLimit
	fRLRemaining
	fRLReset
	fRLResetTime
	fRLObserved
	fRLName
	fRLReason
	fReqLimit // fReqLimit + kindLimit etc.
	fReqRemaining
	fReqReset
	fShopify
	fSforce
	fHSDaily
	fHSDailyRemaining
	fHSMax
	fHSRemaining
	fHSInterval
	fHSSecondly
	fHSSecondlyRemaining
	numFields
)

var _ = [64 - numFields]struct{}{} // fields.mask has a bit for every field

// Which fields each dialect reads, to skip the absent ones at no cost.
const (
	maskRetry = 1<<fRetryAfter | 1<<fRetryAfterMs | 1<<fXRetryAfter
	maskScope = 1<<fXResource | 1<<fXBucket
	maskIETF  = 1<<fRLLimit | 1<<fRLRemaining | 1<<fRLReset | 1<<fRLResetTime | 1<<fRLObserved | 1<<fRLPolicy
	maskNamed = 1<<fReqLimit | 1<<fReqRemaining | 1<<fReqReset
	maskHubSp = 1<<fHSDaily | 1<<fHSDailyRemaining | 1<<fHSMax | 1<<fHSRemaining | 1<<fHSSecondly | 1<<fHSSecondlyRemaining
	maskX     = 1<<fXLimit | 1<<fXRemaining | 1<<fXReset | 1<<fXUsed | 1<<fXResetAfter
	maskXDash = 1<<fXDLimit | 1<<fXDRemaining | 1<<fXDReset | 1<<fZendeskLimit
)

const (
	kindLimit = iota
	kindRemaining
	kindReset
)

// fields holds a response's rate-limit header values, found in one pass over
// the header map. A response has few of them: they are kept in a small
// array, in the order found, until there are more than it holds.
type fields struct {
	mask  uint64               // bit i set: field i holds values
	slot  [numFields]uint8     // 1 + where field i's values are in vals
	used  int                  // slots of vals in use
	vals  [maxSlots][]string   // the values of the fields, in the order found
	all   *[numFields][]string // every field's values, by index, once vals is full
	named []namedField         // quotas other than "requests", when collecting all
	dup   bool                 // a field was found under two spellings
	owned uint64               // bit i set: field i's values were joined into a slice of ours
}

// maxSlots is how many fields a parser holds without allocating: a typical
// response has up to eight.
const maxSlots = 10

// get returns the values of field i, nil if the response has none.
func (f *fields) get(i int) []string {
	if f.all != nil {
		return f.all[i]
	}
	if k := f.slot[i]; k != 0 {
		return f.vals[k-1]
	}
	return nil
}

type namedField struct {
	name string // lower-case
	key  string // the header name
	kind int
	vals []string
}

func (f *fields) collect(h http.Header, all bool) {
	for k, v := range h {
		if f.add(k, v, all); f.dup {
			break
		}
	}
	if f.dup {
		// A hand-built map holds two spellings of one header: their
		// values are joined in the order of the spellings, not in the
		// random order of map iteration, so that the result does not
		// change from call to call. Rare enough to sort for; the sort
		// and the joins keep the cost linear in the number of
		// spellings (TestParseHeadersManySpellings).
		*f = fields{}
		for _, k := range slices.Sorted(maps.Keys(h)) {
			f.add(k, h[k], all)
		}
	}
}

// put records the values of field i, found under header name k.
func (f *fields) put(k string, i int, v []string) {
	if f.mask&(1<<i) != 0 {
		f.dup = true
		joined := f.get(i)
		if f.owned&(1<<i) == 0 {
			// The first join copies: the values are the caller's. Later
			// ones append to our copy, in amortised constant time.
			joined, f.owned = slices.Clip(joined), f.owned|1<<i
		}
		v = append(joined, v...)
	} else if n := f.used; n < len(f.vals) {
		f.mask |= 1 << i
		f.slot[i] = uint8(n + 1)
		f.vals[n] = v
		f.used++
		return
	} else if f.all == nil {
		all := new([numFields][]string)
		for j := range all {
			all[j] = f.get(j)
		}
		f.all = all
	}
	f.mask |= 1 << i
	if f.all != nil {
		f.all[i] = v
	} else {
		f.vals[f.slot[i]-1] = v
	}
}

// eqFold reports whether s equals lower, a lower-case ASCII name, without
// regard to the case of letters. It is strings.EqualFold without Unicode.
func eqFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != lower[i] && !('A' <= c && c <= 'Z' && c+'a'-'A' == lower[i]) {
			return false
		}
	}
	return true
}

func hasPrefixFold(s, lowerPrefix string) bool {
	return len(s) >= len(lowerPrefix) && eqFold(s[:len(lowerPrefix)], lowerPrefix)
}

func (f *fields) add(k string, v []string, all bool) {
	if len(k) < 4 {
		return
	}
	switch k[0] | 0x20 {
	case 'd':
		if k == "Date" || eqFold(k, "date") { // net/http's spelling first
			f.put(k, fDate, v)
		}
	case 'r':
		switch {
		case strings.HasPrefix(k, "Ratelimit"): // net/http's spelling first
			f.addIETF(k, k[len("ratelimit"):], v)
		case eqFold(k, "retry-after"):
			f.put(k, fRetryAfter, v)
		case eqFold(k, "retry-after-ms"):
			f.put(k, fRetryAfterMs, v)
		case hasPrefixFold(k, "ratelimit"):
			f.addIETF(k, k[len("ratelimit"):], v)
		}
	case 'x':
		if k[1] != '-' {
			return
		}
		// Most X- headers are not about rate limits: the third letter
		// turns them away before any longer comparison.
		switch c := k[2] | 0x20; {
		case c != 'r' && c != 'h' && c != 's':
		case strings.HasPrefix(k, "X-Ratelimit-") || hasPrefixFold(k, "x-ratelimit-"): // net/http's spelling first
			f.addX(k, k[len("x-ratelimit-"):], v, all)
		case hasPrefixFold(k, "x-rate-limit"):
			switch rest := k[len("x-rate-limit"):]; {
			case rest == "":
				f.put(k, fZendeskLimit, v)
			case eqFold(rest, "-limit"):
				f.put(k, fXDLimit, v)
			case eqFold(rest, "-remaining"):
				f.put(k, fXDRemaining, v)
			case eqFold(rest, "-reset"):
				f.put(k, fXDReset, v)
			}
		case hasPrefixFold(k, "x-hubspot-ratelimit-"):
			f.addHubSpot(k, k[len("x-hubspot-ratelimit-"):], v)
		case eqFold(k, "x-shopify-shop-api-call-limit"):
			f.put(k, fShopify, v)
		}
	case 'a':
		if hasPrefixFold(k, "anthropic-ratelimit-") {
			f.addNamedSuffix(k, k[len("anthropic-ratelimit-"):], v, all)
		}
	case 's':
		if eqFold(k, "sforce-limit-info") {
			f.put(k, fSforce, v)
		}
	}
}

func (f *fields) addIETF(k, rest string, v []string) {
	var i int
	switch {
	case rest == "":
		i = fRL
	case rest == "-Policy" || eqFold(rest, "-policy"): // net/http's spelling first
		i = fRLPolicy
	case eqFold(rest, "-limit"):
		i = fRLLimit
	case eqFold(rest, "-remaining"):
		i = fRLRemaining
	case eqFold(rest, "-reset"):
		i = fRLReset
	case eqFold(rest, "-resettime"):
		i = fRLResetTime
	case eqFold(rest, "-observed"):
		i = fRLObserved
	case eqFold(rest, "-name"):
		i = fRLName
	case eqFold(rest, "-reason"):
		i = fRLReason
	default:
		return
	}
	f.put(k, i, v)
}

// A fieldName maps the rest of a header name, after a dialect's prefix, to
// its field.
type fieldName struct {
	name string // lower-case
	i    int
}

// xField returns the field of a plain X-RateLimit-* header, given the rest
// of its name: its length and a letter pick the one name to compare.
func xField(rest string) (int, bool) {
	var x fieldName
	switch len(rest) {
	// net/http's canonical spellings first: comparisons with constants
	// compile to a few word compares.
	case 4:
		if rest == "Used" {
			return fXUsed, true
		}
	case 5:
		if rest == "Limit" {
			return fXLimit, true
		}
		if rest == "Reset" {
			return fXReset, true
		}
	case 8:
		if rest == "Resource" {
			return fXResource, true
		}
	case 9:
		if rest == "Remaining" {
			return fXRemaining, true
		}
	}
	switch len(rest) {
	case 4:
		x = fieldName{"used", fXUsed}
	case 5:
		x = fieldName{"limit", fXLimit}
		if rest[0]|0x20 == 'r' {
			x = fieldName{"reset", fXReset}
		}
	case 6:
		x = fieldName{"bucket", fXBucket}
	case 8:
		x = fieldName{"resource", fXResource}
	case 9:
		x = fieldName{"remaining", fXRemaining}
	case 11:
		x = fieldName{"reset-after", fXResetAfter}
		if rest[2]|0x20 == 't' {
			x = fieldName{"retry-after", fXRetryAfter}
		}
	default:
		return 0, false
	}
	return x.i, eqFold(rest, x.name)
}

// hubSpotNames are the names after "X-HubSpot-RateLimit-": a package
// variable, not a literal in the loop, so that no call builds it.
var hubSpotNames = [...]fieldName{
	{"daily", fHSDaily}, {"daily-remaining", fHSDailyRemaining},
	{"max", fHSMax}, {"remaining", fHSRemaining},
	{"interval-milliseconds", fHSInterval},
	{"secondly", fHSSecondly}, {"secondly-remaining", fHSSecondlyRemaining},
}

// addX sorts the X-RateLimit-* headers: GitHub, Discord, Reddit and Jira's
// plain ones, OpenAI's x-ratelimit-{limit,remaining,reset}-NAME and Linear's
// X-RateLimit-NAME-{Limit,Remaining,Reset}.
func (f *fields) addX(k, rest string, v []string, all bool) {
	if i, ok := xField(rest); ok {
		f.put(k, i, v)
		return
	}
	for kind, prefix := range [...]string{"limit-", "remaining-", "reset-"} {
		if hasPrefixFold(rest, prefix) && len(rest) > len(prefix) {
			f.addNamed(k, rest[len(prefix):], kind, v, all)
			return
		}
	}
	f.addNamedSuffix(k, rest, v, all)
}

// addNamedSuffix sorts NAME-limit, NAME-remaining and NAME-reset.
func (f *fields) addNamedSuffix(k, rest string, v []string, all bool) {
	for kind, suffix := range [...]string{"-limit", "-remaining", "-reset"} {
		if n := len(rest) - len(suffix); n > 0 && eqFold(rest[n:], suffix) {
			f.addNamed(k, rest[:n], kind, v, all)
			return
		}
	}
}

func (f *fields) addNamed(k, name string, kind int, v []string, all bool) {
	if eqFold(name, "requests") {
		f.put(k, fReqLimit+kind, v)
	} else if all {
		f.named = append(f.named, namedField{strings.ToLower(name), k, kind, v})
	}
}

func (f *fields) addHubSpot(k, rest string, v []string) {
	for _, x := range &hubSpotNames {
		if eqFold(rest, x.name) {
			f.put(k, x.i, v)
			return
		}
	}
}
