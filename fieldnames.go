package throttle

import (
	"maps"
	"math/bits"
	"net/http"
	"slices"
	"strings"
	"time"
)

// A field is a rate-limit header the dialects read, whatever its spelling;
// families names each on the wire.
type field uint8

const (
	fDate field = iota
	fRetryAfter
	fRetryAfterMs
	fRetryIn // Traefik's X-Retry-In, a Go duration

	// The IETF RateLimit fields of every draft, GitLab's additions and
	// Jira's reason.
	fRL
	fRLPolicy
	fRLLimit
	fRLRemaining
	fRLReset
	fRLResetTime
	fRLObserved
	fRLName
	fRLReason

	// X-RateLimit-*: GitHub, Discord, Reddit, Jira, MailerLite.
	fXLimit
	fXRemaining
	fXReset
	fXUsed
	fXResetAfter
	fXResource
	fXBucket
	fXRetryAfter

	// How a token bucket refills: Spring Cloud Gateway's
	// X-RateLimit-Replenish-Rate, -Burst-Capacity and -Requested-Tokens;
	// Atlassian Data Center's X-RateLimit-FillRate and -Interval-Seconds.
	fXReplenish
	fXBurst
	fXRequested
	fXFillRate
	fXInterval

	// The request quota named in the header name (OpenAI, Anthropic,
	// Linear): fReqLimit + kindLimit and so on.
	fReqLimit
	fReqRemaining
	fReqReset
	// fPeriod is a quota named for its period (Kong's
	// X-RateLimit-Limit-Minute), kept in fields.named.
	fPeriod
	// fNamed is every other named quota, kept in fields.named, and only
	// when ParseQuotas asks for all.
	fNamed

	// X-Rate-Limit-*: X, Okta; Zendesk's X-Rate-Limit.
	fXDLimit
	fXDRemaining
	fXDReset
	fZendeskLimit

	fHSMax
	fHSRemaining
	fHSInterval
	fHSSecondly
	fHSSecondlyRemaining
	fHSDaily
	fHSDailyRemaining
	fShopify
	fSforce
)

const numFields = int(fSforce) + 1

var _ = [64 - numFields]struct{}{} // fields.mask has a bit for every field

// fieldSet returns the set of fields fs, one bit each.
func fieldSet(fs ...field) uint64 {
	var m uint64
	for _, f := range fs {
		m |= 1 << f
	}
	return m
}

// A family is the headers whose names start with prefix: each row of names
// maps the rest of a name, in lower case, to its field. A new header is one
// row here (and a field constant, for its dialect to read it by).
type family struct {
	prefix string // lower case
	names  []fieldName
	// named: the rest of a name may name a quota of one of the kinds,
	// as NAME-limit (Anthropic, Linear) or, with kindFirst, as limit-NAME
	// (OpenAI).
	named, kindFirst bool

	// Set by init from the above: the prefix in net/http's spelling, and
	// every whole name.
	canon string
	full  []fullName
}

type fieldName struct {
	name string // after the family's prefix, lower case
	f    field
}

// A fullName is a header name in net/http's spelling and in lower case.
type fullName struct {
	canon, lower string
	f            field
}

var families = [...]family{
	{prefix: "date", names: []fieldName{{"", fDate}}},
	{prefix: "ratelimit", names: []fieldName{
		{"", fRL}, {"-policy", fRLPolicy}, {"-limit", fRLLimit}, {"-remaining", fRLRemaining},
		{"-reset", fRLReset}, {"-resettime", fRLResetTime}, {"-observed", fRLObserved},
		{"-name", fRLName}, {"-reason", fRLReason},
	}},
	{prefix: "retry-after", names: []fieldName{{"", fRetryAfter}, {"-ms", fRetryAfterMs}}},
	{prefix: "x-ratelimit-", named: true, kindFirst: true, names: []fieldName{
		{"limit", fXLimit}, {"remaining", fXRemaining}, {"reset", fXReset}, {"used", fXUsed},
		{"reset-after", fXResetAfter}, {"resource", fXResource}, {"bucket", fXBucket},
		{"retry-after", fXRetryAfter}, {"replenish-rate", fXReplenish}, {"burst-capacity", fXBurst},
		{"requested-tokens", fXRequested}, {"fillrate", fXFillRate}, {"interval-seconds", fXInterval},
	}},
	{prefix: "x-rate-limit", names: []fieldName{
		{"", fZendeskLimit}, {"-limit", fXDLimit}, {"-remaining", fXDRemaining}, {"-reset", fXDReset},
		{"-retry-after-seconds", fXRetryAfter}, // Bucket4j
	}},
	{prefix: "x-retry-in", names: []fieldName{{"", fRetryIn}}},
	{prefix: "x-hubspot-ratelimit-", names: []fieldName{
		{"max", fHSMax}, {"remaining", fHSRemaining}, {"interval-milliseconds", fHSInterval},
		{"secondly", fHSSecondly}, {"secondly-remaining", fHSSecondlyRemaining},
		{"daily", fHSDaily}, {"daily-remaining", fHSDailyRemaining},
	}},
	{prefix: "x-shopify-shop-api-call-limit", names: []fieldName{{"", fShopify}}},
	{prefix: "sforce-limit-info", names: []fieldName{{"", fSforce}}},
	{prefix: "anthropic-ratelimit-", named: true},
}

// The kinds of a named quota's fields, in the order of fReqLimit's.
const (
	kindLimit = iota
	kindRemaining
	kindReset
)

var kindNames = [...]string{kindLimit: "limit", kindRemaining: "remaining", kindReset: "reset"}

// init spells every family's names as net/http does: http.Header.Set and
// the server side of net/http canonicalize names, so that a plain
// comparison finds most fields before the comparison that folds case
// (BenchmarkParseHeadersGitHub).
func init() {
	for i := range families {
		fam := &families[i]
		for _, n := range fam.names {
			lower := fam.prefix + n.name
			fam.full = append(fam.full, fullName{http.CanonicalHeaderKey(lower), lower, n.f})
		}
		fam.canon = http.CanonicalHeaderKey(fam.prefix + "x")[:len(fam.prefix)]
	}
}

// familiesAt indexes families by the first and third letters of their
// prefix: most headers of a response belong to none, and one lookup turns
// them away (BenchmarkParseHeadersGitHub).
var familiesAt = func() (t [26][26]uint16) {
	for i, fam := range &families {
		t[fam.prefix[0]-'a'][fam.prefix[2]-'a'] |= 1 << i
	}
	return t
}()

var _ = [16 - len(families)]struct{}{} // familiesAt has a bit for every family

// fields holds a response's rate-limit header values, found in one pass
// over the header map. A response has few of them: they are kept in a
// small array, in the order found, until there are more than it holds, so
// that a parser is quick to clear: an array of every field's values costs
// BenchmarkParseHeadersIETFStructured some 3%.
type fields struct {
	mask  uint64               // bit f set: field f holds values
	slot  [numFields]uint8     // 1 + where field f's values are in vals
	used  int                  // slots of vals in use
	vals  [maxSlots][]string   // the values of the fields, in the order found
	all   *[numFields][]string // every field's values, by field, once vals is full
	named []namedField         // quotas other than "requests", when collecting all
	dup   bool                 // a field was found under two spellings
	owned uint64               // bit f set: field f's values were joined into a slice of ours
}

// maxSlots is how many fields a parser holds without allocating: a typical
// response has up to eight.
const maxSlots = 10

// A namedField is a field of a quota named in its header name.
type namedField struct {
	name string // lower case
	key  string // the header name
	kind int
	vals []string
}

// get returns the values of field f, nil if the response has none.
func (fs *fields) get(f field) []string {
	if fs.all != nil {
		return fs.all[f]
	}
	if k := fs.slot[f]; k != 0 {
		return fs.vals[k-1]
	}
	return nil
}

func (fs *fields) collect(h http.Header, all bool) {
	for k, v := range h {
		if fs.add(k, v, all); fs.dup {
			break
		}
	}
	if fs.dup {
		// A hand-built map holds two spellings of one header: their
		// values are joined in the order of the spellings, not in the
		// random order of map iteration, so that the result does not
		// change from call to call. Rare enough to sort for; the sort
		// and the joins keep the cost linear in the number of
		// spellings (TestParseHeadersManySpellings).
		*fs = fields{}
		for _, k := range slices.Sorted(maps.Keys(h)) {
			fs.add(k, h[k], all)
		}
	}
}

// add records the values v of header k, if it is a field.
func (fs *fields) add(k string, v []string, all bool) {
	if len(k) < 4 {
		return // shorter than any prefix
	}
	c0, c2 := k[0]|0x20-'a', k[2]|0x20-'a'
	if c0 >= 26 || c2 >= 26 {
		return
	}
	for m := familiesAt[c0][c2]; m != 0; m &= m - 1 {
		fam := &families[bits.TrailingZeros16(m)]
		for i := range fam.full {
			if n := &fam.full[i]; k == n.canon || eqFold(k, n.lower) {
				fs.put(n.f, v)
				return
			}
		}
		if fam.named && (strings.HasPrefix(k, fam.canon) || hasPrefixFold(k, fam.prefix)) {
			fs.addNamed(k, k[len(fam.prefix):], fam.kindFirst, v, all)
			return
		}
	}
}

// addNamed records the field of a named quota, rest being its header name
// after the family's prefix: limit-NAME when kindFirst (tried first), or
// NAME-limit.
func (fs *fields) addNamed(k, rest string, kindFirst bool, v []string, all bool) {
	if kindFirst {
		for kind, kn := range &kindNames {
			if len(rest) > len(kn)+1 && rest[len(kn)] == '-' && hasPrefixFold(rest, kn) {
				fs.putNamed(k, rest[len(kn)+1:], kind, v, all)
				return
			}
		}
	}
	for kind, kn := range &kindNames {
		if n := len(rest) - len(kn) - 1; n > 0 && rest[n] == '-' && eqFold(rest[n+1:], kn) {
			fs.putNamed(k, rest[:n], kind, v, all)
			return
		}
	}
}

// putNamed records the values v of the kind field of the quota name, found
// under header k. A quota named for its period is Kong's request quota, kept
// whether or not all are collected.
func (fs *fields) putNamed(k, name string, kind int, v []string, all bool) {
	switch {
	case eqFold(name, "requests"):
		fs.put(fReqLimit+field(kind), v)
	case periodOf(name) >= 0:
		fs.named = append(fs.named, namedField{strings.ToLower(name), k, kind, v})
		fs.mask |= 1 << fPeriod
	case all:
		fs.named = append(fs.named, namedField{strings.ToLower(name), k, kind, v})
		fs.mask |= 1 << fNamed
	}
}

// periods are the periods Kong limits requests by, as its header names
// spell them, and their lengths: a calendar month's or year's is not one
// length.
var periods = [...]struct {
	name   string
	window time.Duration
}{
	{"second", time.Second}, {"minute", time.Minute}, {"hour", time.Hour},
	{"day", 24 * time.Hour}, {"month", 0}, {"year", 0},
}

// periodOf returns the index in periods of the period name, or -1.
func periodOf(name string) int {
	for i := range periods {
		if eqFold(name, periods[i].name) {
			return i
		}
	}
	return -1
}

// put records the values v of field f.
func (fs *fields) put(f field, v []string) {
	if fs.mask&(1<<f) != 0 {
		fs.dup = true
		joined := fs.get(f)
		if fs.owned&(1<<f) == 0 {
			// The first join copies: the values are the caller's. Later
			// ones append to our copy, in amortised constant time.
			joined, fs.owned = slices.Clip(joined), fs.owned|1<<f
		}
		v = append(joined, v...)
	} else if fs.all == nil && fs.used < len(fs.vals) {
		fs.used++
		fs.slot[f] = uint8(fs.used)
	} else if fs.all == nil {
		all := new([numFields][]string)
		for g := range all {
			all[g] = fs.get(field(g))
		}
		fs.all = all
	}
	fs.mask |= 1 << f
	if fs.all != nil {
		fs.all[f] = v
	} else {
		fs.vals[fs.slot[f]-1] = v
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
