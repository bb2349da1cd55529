package throttle

import (
	"cmp"
	"maps"
	"math"
	"math/bits"
	"net/http"
	"slices"
	"strings"
	"time"
)

// A Quota is what one HTTP response says about the client's rate limit: the
// number of quota units a window allows (Limit), the number left in the
// current window (Remaining), when that window starts over (Reset), how long
// to stay away before the next request (RetryAfter) and how long a window is
// (Window). Units are requests unless Policy names another unit ("tokens",
// "input-tokens", ...); counts may be fractional (Reddit reports "595.0").
//
// A field the response did not state holds its not-stated value: -1 for Limit
// and Remaining (as http.Request.ContentLength uses -1), the zero time for
// Reset, zero for RetryAfter and Window, and "" for Policy and Scope. Note
// that the zero Quota is not "nothing stated": it states an exhausted quota
// of zero.
//
// Reset is on the client's clock. A relative reset is added to the arrival
// time passed to [ParseHeaders]; an absolute one is moved by the difference
// between the response's Date header and that arrival time, so clock skew
// between server and client does not shift it. Reset carries the location
// and monotonic reading of the arrival time and is never before it.
//
// A Quota is a plain value with no methods that modify it; it is safe to copy
// and to share between goroutines.
type Quota struct {
	Limit      float64       // quota units per window; -1 when the response did not say
	Remaining  float64       // quota units left in this window; -1 when the response did not say; never above Limit
	Reset      time.Time     // when the window resets; zero when the response did not say
	RetryAfter time.Duration // wait before the next request; zero when the response did not say
	Window     time.Duration // the policy's window length; zero when the response did not say

	// Policy names the quota: the IETF policy name ("default", "burst"...),
	// the quota family for OpenAI, Anthropic and Linear ("requests",
	// "tokens", "input-tokens", "complexity"...), the Salesforce usage name
	// ("api-usage"), the HubSpot limit ("daily", "secondly"), the GitLab
	// RateLimit-Name or the Jira RateLimit-Reason; "" when unnamed.
	Policy string

	// Scope is the server-declared bucket the response belongs to: GitHub's
	// X-RateLimit-Resource (core, search, graphql...) or Discord's
	// X-RateLimit-Bucket; "" when not said.
	Scope string
}

// Known reports whether the response stated anything at all about its rate
// limit, that is whether any field of q differs from its not-stated value.
func (q Quota) Known() bool {
	return q.statesQuota() || q.RetryAfter > 0 || q.Policy != "" || q.Scope != ""
}

// statesQuota reports whether q states a count, a reset or a window: what
// one dialect must say to be chosen over the dialects after it.
func (q Quota) statesQuota() bool {
	return q.Limit >= 0 || q.Remaining >= 0 || !q.Reset.IsZero() || q.Window > 0
}

// notStated is the value of Limit and Remaining when the response did not say.
const notStated = -1

func unknownQuota() Quota { return Quota{Limit: notStated, Remaining: notStated} }

// Thresholds that tell the numeric forms of a reset apart and bound what is
// believed.
const (
	// A bare reset number is an epoch when it lies within epochWindow of
	// the response's own clock (its Date, else the arrival time): epoch
	// milliseconds (Linear, OpenRouter) or epoch seconds (GitHub, X, Okta,
	// Discord, GitLab). Any other number is delta seconds (IETF drafts,
	// Reddit). Deciding against the clock rather than a fixed threshold
	// keeps the rule right for clocks far from today's (a test's fake
	// clock at 2000-01-01, say) and for deltas of any plausible size.
	epochWindow = 10 * 365 * 24 * time.Hour
	// maxAhead is how far away a reset or a Retry-After may lie and still
	// be stated, in every form it takes: delta seconds or milliseconds, a
	// Go duration, an epoch, a date. It is the bound a bare number's deltas
	// already had, so that no form can say what another may not.
	maxAhead = epochWindow
	// pastTolerance is how far before the response's Date an absolute reset
	// may lie and still mean "now": Date has one-second resolution, Jira
	// sends minute-precision resets, and a response may sit briefly in a
	// proxy. An earlier reset describes a window long gone and is ignored.
	pastTolerance = 2 * time.Minute
	// dateSanity bounds the skew we accept between the response's Date and
	// the client's clock; a Date further off is garbage (or a response
	// replayed from a cache) and absolute resets fall back to the client's
	// clock.
	dateSanity = 24 * time.Hour
	// dateAgree is how far, in seconds, the response's Date may be from
	// the arrival time before the parse is reported as depending on the
	// wall clock (parseHeaders): a Transport whose wall clock is derived
	// then reads it afresh.
	dateAgree = 60
	// redditWindow is Reddit's documented 10-minute averaging window.
	redditWindow = 10 * time.Minute
	// maxQuotas bounds what one response can make ParseQuotas return, and
	// maxMembers the members kept from one structured field: no real API
	// states more, and a hostile megabyte of header must cost linear time.
	maxQuotas  = 64
	maxMembers = 32
)

// ParseHeaders reads the rate-limit headers of a response that arrived at
// now and returns the request-count quota they describe. Fields the response
// does not state hold their not-stated values (see [Quota]); ParseHeaders
// never fails and never allocates for a typical GitHub response.
//
// # Dialects, in order of precedence
//
//  1. IETF structured fields, draft-ietf-httpapi-ratelimit-headers-08 and
//     later: RateLimit-Policy: "burst";q=100;w=60 and RateLimit:
//     "burst";r=50;t=30, items linked by name. Of the request-unit policies
//     named in RateLimit (no qu parameter, or qu="requests") the one with
//     the least remaining is chosen, the first listed on a tie.
//  2. IETF draft-07: RateLimit: limit=100, remaining=50, reset=5, with
//     RateLimit-Policy: 100;w=60 giving the window.
//  3. IETF drafts up to 06: RateLimit-Limit, -Remaining, -Reset and
//     RateLimit-Policy, including the early list form RateLimit-Limit: 10,
//     10;w=1, 1000;w=3600 whose parameter-free item is the effective limit;
//     GitLab's epoch RateLimit-Reset, RateLimit-ResetTime, -Observed, -Name.
//  4. Named request quotas: OpenAI's x-ratelimit-{limit,remaining,reset}-requests,
//     Anthropic's anthropic-ratelimit-requests-{limit,remaining,reset},
//     Linear's X-RateLimit-Requests-{Limit,Remaining,Reset}.
//  5. HubSpot (X-HubSpot-RateLimit-Max/-Remaining/-Interval-Milliseconds,
//     then -Secondly, then -Daily), Shopify (X-Shopify-Shop-Api-Call-Limit:
//     used/limit), Salesforce (Sforce-Limit-Info: api-usage=used/limit).
//  6. X-RateLimit-Limit/-Remaining/-Reset/-Used: GitHub, Discord (with
//     X-RateLimit-Reset-After, preferred over -Reset), Reddit (no limit:
//     Limit is Used+Remaining and the window 10 minutes), Jira (ISO 8601
//     reset, RateLimit-Reason as Policy) and the many APIs that copy them.
//  7. X-Rate-Limit-Limit/-Remaining/-Reset (X, Okta) and Zendesk's
//     X-Rate-Limit.
//
// The first dialect that states a count, reset or window supplies the Quota;
// a later one fills in fields it left unstated only when both describe the
// same quota: they agree on Limit or Remaining and contradict each other on
// none of Limit, Remaining, Window and Policy. [ParseQuotas] returns the
// quotas that differ.
//
// Retry-After (delay-seconds, or an HTTP-date measured against the Date
// header) and X-RateLimit-Retry-After fill RetryAfter; retry-after-ms
// (OpenAI, Azure), being the precise form of the same statement, is preferred
// when present. X-RateLimit-Resource (GitHub) or X-RateLimit-Bucket (Discord)
// fill Scope.
//
// # Values
//
// Counts are strict: ASCII digits with an optional fraction; a sign, an
// exponent, hex, underscores, NaN or Infinity, and more than 18 integer
// digits make a value not stated. A remaining count above the limit is
// clamped to the limit. A reset is read as, in order: a bare number (epoch
// milliseconds or epoch seconds when it falls within ten years of the
// response's Date, else delta seconds), an RFC 3339 or minute-precision ISO
// 8601 timestamp (Jira's 2024-01-01T10:00Z), an HTTP-date in any of the
// three formats (the IMF-fixdate also with the zone UTC or a numeric offset,
// as Go's time.RFC1123 and time.RFC1123Z write it), or a Go duration such as
// 6m0s or 7.66s (OpenAI), optionally led by whole days. Absolute resets are
// anchored to the Date header when it is present and within a day of now; a
// reset up to two minutes in the past means now, one further in the past is
// not stated. A reset or Retry-After more than ten years away, in whatever
// form, is not stated.
//
// When a header is repeated (several field lines, or comma-joined values)
// the most conservative reading wins: the least limit, the least remaining,
// the latest reset, the longest Retry-After. Structured fields follow RFC
// 9651: their lines are one list, and a field that fails to parse is ignored
// as a whole.
//
// Header names are matched without regard to case, so a map built by hand
// with lower-case keys (as HTTP/2 captures often are) reads the same as one
// filled by [http.Header.Set]; values may carry surrounding whitespace.
func ParseHeaders(h http.Header, now time.Time) Quota {
	q, _ := parseHeaders(h, now)
	return q
}

// parseHeaders is ParseHeaders, and reports whether the result depends on
// the wall-clock reading of now: whether it placed a time the response
// states as absolute (an epoch, a date) against now rather than against the
// response's Date, or found the Date more than dateAgree seconds from now.
// Relative times (delays, seconds to a reset) depend on now's monotonic
// reading only, as does every use of the result's times against another
// time of the same clock.
func parseHeaders(h http.Header, now time.Time) (q Quota, wall bool) {
	p := newParser(now)
	p.collect(h, false)
	p.run(&q, nil)
	return q, p.wall
}

// ParseQuotas is like [ParseHeaders] but returns every quota the response
// states: requests and tokens, per-minute and per-day, every IETF policy,
// every Salesforce usage and HubSpot limit, and any dialect that disagrees
// with the preferred one. The first element is the Quota ParseHeaders
// returns, unless the response states no request-count quota at all (only
// token quotas, say), in which case the slice holds just the others.
// RetryAfter and Scope are copied onto each element. ParseQuotas returns nil
// when the response says nothing about its rate limit. It returns at most 64
// quotas, and reads the first 32 members of a structured field.
func ParseQuotas(h http.Header, now time.Time) []Quota {
	p := newParser(now)
	p.collect(h, true)
	var extras []Quota
	var primary Quota
	others := p.run(&primary, &extras)
	var out []Quota
	if primary.Known() {
		out = append(out, primary)
	}
	for _, q := range slices.Concat(others, extras) {
		if len(out) == maxQuotas {
			break
		}
		if !q.statesQuota() { // a policy named but not described
			continue
		}
		q.RetryAfter, q.Scope = primary.RetryAfter, primary.Scope
		p.sanitize(&q)
		out = append(out, q)
	}
	return out
}

// run parses every dialect and sets *primary to the preferred quota,
// finished with RetryAfter and Scope. When extras is not nil, run also
// returns the other dialects' quotas that differ from the preferred one and
// appends every secondary quota (token quotas, other policies) to *extras.
func (p *parser) run(primary *Quota, extras *[]Quota) []Quota {
	*primary = unknownQuota()
	var others []Quota
	c := choice{primary: primary, all: extras != nil, others: &others}
	ds := p.dialects()
	if ds&(1<<dIETF) != 0 {
		p.ietf(&c, extras)
	}
	for ds &^= 1<<dIETF | 1<<dIETF07 | 1<<dIETF06; ds != 0; ds &= ds - 1 {
		q := p.dialect(bits.TrailingZeros(ds), extras)
		c.add(&q)
	}
	if p.mask&maskRetry != 0 {
		primary.RetryAfter = p.retryAfter()
	}
	if p.mask&maskScope != 0 {
		primary.Scope = p.scope()
	}
	p.sanitize(primary)
	return others
}

// A choice gathers the dialects' quotas in their order of precedence: the
// first that states a quota is the primary, a later one that describes the
// same quota fills its gaps, and when all is set the others are kept,
// merged in the same way.
type choice struct {
	primary *Quota
	found   bool
	all     bool
	others  *[]Quota
}

func (c *choice) add(q *Quota) {
	switch {
	case !q.statesQuota():
	case !c.found:
		*c.primary, c.found = *q, true
	case sameQuota(c.primary, q):
		fillFrom(c.primary, q)
	case c.all:
		others := *c.others
		for k := range others {
			if sameQuota(&others[k], q) {
				fillFrom(&others[k], q)
				return
			}
		}
		*c.others = append(others, *q) // at most numDialects
	}
}

// The dialects in their order of precedence: the IETF drafts (structured
// fields, draft 07, drafts up to 06), the quotas named in the header name,
// HubSpot, Shopify, Salesforce, X-RateLimit-* and X-Rate-Limit-*.
const (
	dIETF = iota
	dIETF07
	dIETF06
	dNamed
	dHubSpot
	dShopify
	dSalesforce
	dX
	dXDash
	numDialects
)

// dialects returns the set of dialects (bit d for dialect d) of which the
// response has a field.
func (p *parser) dialects() uint {
	var ds uint
	if p.mask&(1<<fRL|maskIETF) != 0 {
		ds |= 1<<dIETF | 1<<dIETF07 | 1<<dIETF06
	}
	if p.mask&maskNamed != 0 || len(p.named) > 0 {
		ds |= 1 << dNamed
	}
	for d, mask := range &dialectMasks {
		if p.mask&mask != 0 {
			ds |= 1 << d
		}
	}
	return ds
}

// dialectMasks holds the fields of each dialect after dNamed.
var dialectMasks = [numDialects]uint64{
	dHubSpot: maskHubSp, dShopify: 1 << fShopify, dSalesforce: 1 << fSforce,
	dX: maskX, dXDash: maskXDash,
}

// dialect reads dialect d, one that follows the IETF drafts (which run
// reads together).
func (p *parser) dialect(d int, extras *[]Quota) Quota {
	switch d {
	case dNamed:
		return p.nameQuotas(extras)
	case dHubSpot:
		return p.hubspot(extras)
	case dShopify:
		return p.shopify()
	case dSalesforce:
		return p.salesforce(extras)
	case dX:
		return p.xRateLimit()
	case dXDash:
		return p.xRateLimitDash()
	}
	return unknownQuota()
}

// ietf reads the IETF fields in all their drafts into c: the structured
// fields of drafts 08 and later, the dictionary of draft 07, and the fields
// of drafts up to 06, in that order of precedence. With extras, it appends
// the policies the preferred reading does not describe.
func (p *parser) ietf(c *choice, extras *[]Quota) {
	// Room for the usual few members of both fields; more go to the heap.
	// RateLimit's members follow RateLimit-Policy's in buf, while there is
	// room: pols is in buf as long as it is no longer than buf.
	var buf [4]sfItem
	pols, ok := sfListLines(p.get(fRLPolicy), buf[:0])
	if !ok {
		pols = nil // RFC 9651 §4.2: a field that fails to parse is ignored
	}
	free := min(len(pols), len(buf))
	rl, rlOK := sfListLines(p.get(fRL), buf[free:free])
	if !rlOK {
		rl = nil
	}
	var chosen Quota
	p.ietfStructured(&chosen, rl, pols, extras)
	c.add(&chosen)
	if !rlOK || extras != nil || p.mask&(maskIETF&^(1<<fRLPolicy)) != 0 || hasIntegerItem(pols) {
		p.ietfDrafts(c, &chosen, pols, !rlOK, extras)
	}
}

// ietfDrafts reads the IETF drafts before 08 into c, after the structured
// fields (chosen): the dictionary of draft 07 when RateLimit is no List
// (dict), the fields of drafts up to 06, and with extras the integer
// policies the chosen reading does not describe.
func (p *parser) ietfDrafts(c *choice, chosen *Quota, pols []sfItem, dict bool, extras *[]Quota) {
	if dict {
		// draft-ietf-httpapi-ratelimit-headers-07 §5 made RateLimit a
		// Dictionary; a field that is no List may be one.
		var dictBuf [4]sfMember
		if d, ok := sfDictLines(p.get(fRL), dictBuf[:0]); ok && len(d) > 0 {
			q := p.ietf07(d, pols)
			c.add(&q)
			if !chosen.statesQuota() {
				*chosen = q
			}
		}
	}
	if p.mask&(maskIETF&^(1<<fRLPolicy)) != 0 || hasIntegerItem(pols) {
		q := p.ietf06(pols, extras)
		c.add(&q)
		if !chosen.statesQuota() {
			*chosen = q
		}
	}
	if extras != nil {
		// The integer policies of drafts up to 07 other than the chosen one.
		if !chosen.statesQuota() {
			*chosen = unknownQuota()
		}
		for i := range pols {
			it := &pols[i]
			lim, ok := it.bare.count()
			if !ok || it.bare.kind != sfInteger {
				continue
			}
			w, _ := it.window()
			if lim == chosen.Limit && w == chosen.Window {
				continue
			}
			addExtra(extras, Quota{Limit: lim, Remaining: notStated, Window: w})
		}
	}
}

// addExtra appends q to *extras, up to maxQuotas.
func addExtra(extras *[]Quota, q Quota) {
	if len(*extras) < maxQuotas {
		*extras = append(*extras, q)
	}
}

// sameQuota reports whether a and b, read from different dialects of one
// response, describe the same quota: they agree on Limit or Remaining and
// contradict each other on nothing.
func sameQuota(a, b *Quota) bool {
	agree := false
	if a.Limit >= 0 && b.Limit >= 0 {
		if a.Limit != b.Limit {
			return false
		}
		agree = true
	}
	if a.Remaining >= 0 && b.Remaining >= 0 {
		if a.Remaining != b.Remaining {
			return false
		}
		agree = true
	}
	if a.Window > 0 && b.Window > 0 && a.Window != b.Window {
		return false
	}
	if a.Policy != "" && b.Policy != "" && a.Policy != b.Policy {
		return false
	}
	return agree
}

// fillFrom copies into q the fields q left unstated and b states.
func fillFrom(q, b *Quota) {
	if q.Limit < 0 {
		q.Limit = b.Limit
	}
	if q.Remaining < 0 {
		q.Remaining = b.Remaining
	}
	if q.Reset.IsZero() {
		q.Reset = b.Reset
	}
	if q.Window == 0 {
		q.Window = b.Window
	}
	if q.Policy == "" {
		q.Policy = b.Policy
	}
}

// sanitize enforces the invariants Quota documents, whatever the dialects
// produced.
func (p *parser) sanitize(q *Quota) {
	if !(q.Limit >= 0) || math.IsInf(q.Limit, 0) {
		q.Limit = notStated
	}
	if !(q.Remaining >= 0) || math.IsInf(q.Remaining, 0) {
		q.Remaining = notStated
	}
	if q.Limit >= 0 && q.Remaining > q.Limit {
		q.Remaining = q.Limit
	}
	if !q.Reset.IsZero() && q.Reset.Before(p.now) {
		q.Reset = p.now
	}
	q.RetryAfter = max(q.RetryAfter, 0)
	q.Window = max(q.Window, 0)
}

// parser holds one response's header values and the arrival time.
type parser struct {
	fields
	now       time.Time
	nowSec    int64 // now as Unix seconds and nanoseconds: server times are
	nowNsec   int64 // compared in these, sparing time.Time's checked arithmetic
	dateSec   int64 // the response's Date, Unix seconds, when dateState is 1
	dateState int8  // 0: not parsed yet; 1: date is usable; -1: absent or unusable
	wall      bool  // an absolute time was placed against now's wall clock
	std       stdBudget
}

func newParser(now time.Time) parser {
	return parser{now: now, nowSec: now.Unix(), nowNsec: int64(now.Nanosecond())}
}

// anchor reports whether the response's Date (p.dateSec) is present,
// parseable and within dateSanity of now.
func (p *parser) anchor() bool {
	if p.dateState == 0 {
		p.dateState = -1
		for _, v := range p.get(fDate) {
			v = trimOWS(v)
			date, ok := imfUnix(v) // the format servers send
			if !ok {
				var t time.Time
				if t, ok = parseHTTPDate(v, &p.std); !ok {
					continue
				}
				date = t.Unix()
			}
			const saneSec = int64(dateSanity / time.Second)
			ds := date - p.nowSec
			if ds < -dateAgree || ds > dateAgree {
				p.wall = true // whether the Date is used depends on the clock
			}
			if ds > -saneSec-1 && ds < saneSec+1 {
				if d := time.Duration(ds)*time.Second - time.Duration(p.nowNsec); d > -dateSanity && d < dateSanity {
					p.dateSec, p.dateState = date, 1
				}
			}
			break
		}
	}
	return p.dateState == 1
}

// refSec returns the Unix seconds of the instant server times are measured
// from: the response's Date when usable, else the arrival time. It tells
// epochs from delays, which a wall clock off by hours does not change;
// fromRef, which places a time, records a use of the wall clock (p.wall).
func (p *parser) refSec() int64 {
	if p.anchor() {
		return p.dateSec
	}
	return p.nowSec
}

// fromRef returns how long after the reference instant (see refSec) the
// server instant sec.nsec lies, or false if that overflows a Duration.
func (p *parser) fromRef(sec, nsec int64) (time.Duration, bool) {
	refSec, refNsec := p.nowSec, p.nowNsec
	if p.anchor() {
		refSec, refNsec = p.dateSec, 0
	} else {
		p.wall = true
	}
	const maxSec = math.MaxInt64/int64(time.Second) - 1
	ds := sec - refSec
	if ds > maxSec || ds < -maxSec || sec > math.MaxInt64/2 || sec < math.MinInt64/2 {
		return 0, false
	}
	return time.Duration(ds)*time.Second + time.Duration(nsec-refNsec), true
}

// after returns the local time d after arrival.
func (p *parser) after(d time.Duration) time.Time { return p.now.Add(d) }

// absolute maps an absolute server time onto the client's clock.
func (p *parser) absolute(t time.Time) (time.Time, bool) {
	return p.absoluteUnix(t.Unix(), int64(t.Nanosecond()))
}

// absoluteUnix is absolute for a server time given as Unix seconds and
// nanoseconds.
func (p *parser) absoluteUnix(sec, nsec int64) (time.Time, bool) {
	d, ok := p.fromRef(sec, nsec)
	if !ok || d > maxAhead {
		return time.Time{}, false
	}
	if d < 0 {
		if d < -pastTolerance {
			return time.Time{}, false
		}
		d = 0
	}
	return p.now.Add(d), true
}

// resetAt reads one reset value in any of the forms ParseHeaders documents.
func (p *parser) resetAt(s string) (time.Time, bool) {
	if ip, ns, ok := parseDecimal(s); ok {
		return p.resetNumber(ip, ns)
	}
	if t, ok := parseTimestamp(s, &p.std); ok {
		return p.absolute(t)
	}
	if d, ok := parseGoDuration(s, &p.std); ok && d <= maxAhead {
		return p.after(d), true
	}
	return time.Time{}, false
}

// resetNumber classifies a bare reset number by magnitude.
func (p *parser) resetNumber(ip uint64, ns int64) (time.Time, bool) {
	ref := p.refSec()
	window := int64(epochWindow / time.Second)
	near := func(sec uint64) bool {
		if sec > math.MaxInt64/2 {
			return false
		}
		d := int64(sec) - ref
		return d > -window && d < window
	}
	switch {
	case near(ip / 1000):
		return p.absoluteUnix(int64(ip/1000), int64(ip%1000)*1e6+ns/1e3)
	case near(ip):
		return p.absoluteUnix(int64(ip), ns)
	case ip > uint64(maxAhead/time.Second):
		// Neither an epoch near now nor a plausible delta: near a clock
		// far off, maybe.
		p.wall = p.wall || !p.anchor()
		return time.Time{}, false
	default:
		d, ok := delay(ip, ns, time.Second)
		return p.after(d), ok
	}
}

// latestReset reads every element of a reset header and returns the latest.
func (p *parser) latestReset(vals []string) (time.Time, bool) {
	if len(vals) == 0 {
		return time.Time{}, false
	}
	if len(vals) == 1 {
		s := trimOWS(vals[0])
		if ip, ns, ok := parseDecimal(s); ok { // the usual case: a number
			return p.resetNumber(ip, ns)
		}
		if strings.IndexByte(s, ',') < 0 {
			return p.resetAt(s)
		}
	}
	var latest time.Time
	found := false
	for e := (elems{vals: vals}); ; {
		s, ok := e.next()
		if !ok {
			break
		}
		if t, ok := p.resetAt(s); ok && (!found || t.After(latest)) {
			latest, found = t, true
		}
	}
	return latest, found
}

// longestDelay reads every element of a header holding a plain delay in
// unit (Discord's X-RateLimit-Reset-After in seconds, retry-after-ms in
// milliseconds, HubSpot's interval) and returns the longest of those no
// longer than limit.
func longestDelay(vals []string, unit, limit time.Duration) (time.Duration, bool) {
	if len(vals) == 0 {
		return 0, false
	}
	var longest time.Duration
	found := false
	for e := (elems{vals: vals}); ; {
		s, ok := e.next()
		if !ok {
			break
		}
		ip, ns, ok := parseDecimal(s)
		if !ok {
			continue
		}
		d, ok := scaleDuration(ip, ns, unit)
		if ok && d <= limit && (!found || d > longest) {
			longest, found = d, true
		}
	}
	return longest, found
}

// retryAfter reads Retry-After (RFC 9110 §10.2.3), X-RateLimit-Retry-After
// (MailerLite) and retry-after-ms (OpenAI, Azure OpenAI).
func (p *parser) retryAfter() time.Duration {
	if d, ok := longestDelay(p.get(fRetryAfterMs), time.Millisecond, maxAhead); ok {
		return d
	}
	var longest time.Duration
	for _, vals := range [...][]string{p.get(fRetryAfter), p.get(fXRetryAfter)} {
		for e := (elems{vals: vals}); ; {
			s, ok := e.next()
			if !ok {
				break
			}
			var d time.Duration
			if ip, ns, ok := parseDecimal(s); ok {
				if d, ok = delay(ip, ns, time.Second); !ok {
					continue
				}
			} else if t, ok := parseHTTPDate(s, &p.std); ok {
				// An HTTP-date is measured against the response's own Date
				// so that skew does not stretch or shrink the wait.
				if d, ok = p.fromRef(t.Unix(), int64(t.Nanosecond())); !ok || d > maxAhead {
					continue
				}
			}
			longest = max(longest, d)
		}
	}
	return longest
}

// scope reads GitHub's X-RateLimit-Resource or Discord's X-RateLimit-Bucket.
func (p *parser) scope() string {
	if s := firstValue(p.get(fXResource)); s != "" {
		return s
	}
	return firstValue(p.get(fXBucket))
}

// quotaOf reads a limit, remaining, reset triple of plain headers.
func (p *parser) quotaOf(limit, remaining, reset []string) Quota {
	q := unknownQuota()
	q.Limit = leastCount(limit)
	q.Remaining = leastCount(remaining)
	if t, ok := p.latestReset(reset); ok {
		q.Reset = t
	}
	return q
}

// ietfStructured reads RateLimit and RateLimit-Policy as defined by
// draft-ietf-httpapi-ratelimit-headers-08 and later (§3, §4): lists of
// policies named by a String (a Token in -08), linked by name, with the
// parameters q (quota), w (window seconds), qu (quota unit), r (remaining)
// and t (seconds until the window resets). Unknown parameters are ignored.
func (p *parser) ietfStructured(q *Quota, items, pols []sfItem, extras *[]Quota) {
	if extras == nil && len(items) == 1 && len(pols) == 1 &&
		items[0].bare.kind == sfString && !items[0].bare.esc && items[0].bare == pols[0].bare {
		// The usual response: one policy, named in both fields.
		s := newPolicy(items[0].bare.str)
		s.fromRateLimit(&items[0])
		s.fromPolicy(&pols[0])
		if s.requests && s.statesQuota() {
			p.policyQuota(q, &s)
		} else {
			*q = unknownQuota()
		}
		return
	}
	var buf [4]sfPolicy
	ps := buf[:0]
	for field, members := range [...][]sfItem{items, pols} { // RateLimit's first
		for j := range members {
			it := &members[j]
			name, ok := it.bare.name()
			if !ok {
				continue
			}
			var s *sfPolicy
			ps, s = namedPolicy(ps, name)
			if field == 0 {
				s.fromRateLimit(it)
			} else {
				s.fromPolicy(it)
			}
		}
	}
	// The request policy named in RateLimit with the least remaining; else
	// the first such policy that states anything; else (RateLimit-Policy
	// alone) the first request policy that states anything.
	pick := -1
	for i := range ps {
		if s := &ps[i]; s.requests && s.live && s.remaining >= 0 && (pick < 0 || s.remaining < ps[pick].remaining) {
			pick = i
		}
	}
	for _, live := range [...]bool{true, false} {
		for i := range ps {
			if s := &ps[i]; pick < 0 && s.requests && (s.live || !live) && s.statesQuota() {
				pick = i
			}
		}
	}
	if extras != nil {
		for i := range ps {
			if i != pick && ps[i].statesQuota() {
				var e Quota
				p.policyQuota(&e, &ps[i])
				addExtra(extras, e)
			}
		}
	}
	if pick < 0 {
		*q = unknownQuota()
		return
	}
	p.policyQuota(q, &ps[pick])
}

// An sfPolicy gathers what RateLimit and RateLimit-Policy say of one policy.
type sfPolicy struct {
	name      string
	limit     float64       // notStated if not stated
	remaining float64       // notStated if not stated
	reset     time.Duration // from the response's arrival; negative if not stated
	window    time.Duration
	live      bool // named by the RateLimit field
	requests  bool // counts requests (qu absent or "requests")
}

func newPolicy(name string) sfPolicy {
	return sfPolicy{name: name, limit: notStated, remaining: notStated, reset: -1, requests: true}
}

// fromRateLimit applies a member of the RateLimit field to its policy.
func (s *sfPolicy) fromRateLimit(it *sfItem) {
	s.live = true
	if r, ok := it.params.r.count(); ok && it.params.r.kind == sfInteger {
		s.remaining = leastStated(s.remaining, r)
	}
	if t, ok := it.params.t.seconds(); ok && t <= maxAhead {
		s.reset = max(s.reset, t) // the latest reset
	}
}

// fromPolicy applies a member of the RateLimit-Policy field to its policy.
func (s *sfPolicy) fromPolicy(it *sfItem) {
	if q, ok := it.params.q.count(); ok && it.params.q.kind == sfInteger {
		s.limit = leastStated(s.limit, q)
	}
	if w, ok := it.window(); ok && s.window == 0 {
		s.window = w
	}
	// §3.1.2: the default quota unit is "requests".
	if u := it.params.qu; u != quNone {
		s.requests = u == quRequests
	}
}

// statesQuota is Quota.statesQuota for the policy.
func (s *sfPolicy) statesQuota() bool {
	return s.limit >= 0 || s.remaining >= 0 || s.reset >= 0 || s.window > 0
}

// policyQuota sets *q to the Quota the policy describes.
func (p *parser) policyQuota(q *Quota, s *sfPolicy) {
	*q = Quota{Limit: s.limit, Remaining: s.remaining, Window: s.window, Policy: s.name}
	if s.reset >= 0 {
		q.Reset = p.after(s.reset)
	}
}

// namedPolicy returns ps with a policy called name, added if it was not
// there, and that policy.
func namedPolicy(ps []sfPolicy, name string) ([]sfPolicy, *sfPolicy) {
	for i := range ps {
		if ps[i].name == name {
			return ps, &ps[i]
		}
	}
	ps = append(ps, newPolicy(name))
	return ps, &ps[len(ps)-1]
}

// ietf07 reads the RateLimit dictionary of
// draft-ietf-httpapi-ratelimit-headers-07 §5 (limit, remaining, reset in
// delta seconds) and takes the window from the RateLimit-Policy item whose
// quota equals the limit.
func (p *parser) ietf07(dict []sfMember, pols []sfItem) Quota {
	q := unknownQuota()
	for _, m := range dict {
		switch m.key {
		case "limit":
			if v, ok := m.item.bare.count(); ok {
				q.Limit = v
			}
		case "remaining":
			if v, ok := m.item.bare.count(); ok {
				q.Remaining = v
			}
		case "reset":
			if m.item.bare.kind == sfInteger && m.item.bare.num >= 0 {
				if t, ok := p.resetNumber(uint64(m.item.bare.num), 0); ok {
					q.Reset = t
				}
			}
		}
	}
	if q.Limit >= 0 {
		q.Window = windowFor(q.Limit, pols)
	}
	return q
}

// ietf06 reads RateLimit-Limit, -Remaining and -Reset of
// draft-ietf-httpapi-ratelimit-headers up to -06, and GitLab's variant of
// them (https://docs.gitlab.com/ee/administration/settings/user_and_ip_rate_limits.html:
// RateLimit-Reset as epoch seconds, RateLimit-ResetTime as an HTTP-date,
// RateLimit-Observed, RateLimit-Name). It is read only when the response has
// those fields or an integer policy.
func (p *parser) ietf06(pols []sfItem, extras *[]Quota) Quota {
	q := unknownQuota()
	q.Limit, q.Window = limitList(p.get(fRLLimit), extras)
	q.Remaining = leastCount(p.get(fRLRemaining))
	r1, ok1 := p.latestReset(p.get(fRLReset))
	r2, ok2 := p.latestReset(p.get(fRLResetTime))
	switch {
	case ok1 && ok2:
		q.Reset = laterOf(r1, r2)
	case ok1:
		q.Reset = r1
	case ok2:
		q.Reset = r2
	}
	if obs := greatestCount(p.get(fRLObserved)); q.Remaining < 0 && q.Limit >= 0 && obs >= 0 {
		q.Remaining = max(q.Limit-obs, 0)
	}
	if q.Limit >= 0 && q.Window == 0 {
		q.Window = windowFor(q.Limit, pols)
	}
	if !q.statesQuota() {
		// RateLimit-Policy alone (drafts 03 to 07): its first policy.
		for i := range pols {
			if it := &pols[i]; it.bare.kind == sfInteger && it.bare.num >= 0 {
				q.Limit = it.bare.num
				q.Window, _ = it.window()
				break
			}
		}
	}
	if q.statesQuota() {
		q.Policy = firstValue(p.get(fRLName))
	}
	return q
}

// hasIntegerItem reports whether a policy is an Integer, as in the drafts up
// to 07.
func hasIntegerItem(pols []sfItem) bool {
	for i := range pols {
		if pols[i].bare.kind == sfInteger {
			return true
		}
	}
	return false
}

// windowFor returns the window of the first integer policy item (drafts up
// to 07) whose quota equals limit.
func windowFor(limit float64, pols []sfItem) time.Duration {
	for i := range pols {
		if it := &pols[i]; it.bare.kind == sfInteger && it.bare.num >= 0 && it.bare.num == limit {
			if w, ok := it.window(); ok {
				return w
			}
		}
	}
	return 0
}

// nameQuotas reads the request quota of the dialects that name their quotas in
// the header name, and with extras every other named quota:
//   - OpenAI, https://platform.openai.com/docs/guides/rate-limits
//     x-ratelimit-{limit,remaining,reset}-{requests,tokens}, resets as Go
//     durations ("6m0s", "20ms");
//   - Anthropic, https://docs.anthropic.com/en/api/rate-limits
//     anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset},
//     resets in RFC 3339;
//   - Linear, https://linear.app/developers/rate-limiting
//     X-RateLimit-{Requests,Complexity}-{Limit,Remaining,Reset}, resets in
//     epoch milliseconds.
func (p *parser) nameQuotas(extras *[]Quota) Quota {
	if p.mask&maskNamed == 0 && len(p.named) == 0 {
		return unknownQuota()
	}
	q := p.quotaOf(p.get(fReqLimit), p.get(fReqRemaining), p.get(fReqReset))
	if q.statesQuota() {
		q.Policy = "requests"
	}
	if extras != nil && len(p.named) > 0 {
		slices.SortFunc(p.named, func(a, b namedField) int {
			return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(a.key, b.key))
		})
		for i := 0; i < len(p.named); {
			j := i
			var v [3][]string
			for ; j < len(p.named) && p.named[j].name == p.named[i].name; j++ {
				v[p.named[j].kind] = append(v[p.named[j].kind], p.named[j].vals...)
			}
			nq := p.quotaOf(v[kindLimit], v[kindRemaining], v[kindReset])
			if nq.statesQuota() {
				nq.Policy = p.named[i].name
				addExtra(extras, nq)
			}
			i = j
		}
	}
	return q
}

// hubspot reads HubSpot's headers
// (https://developers.hubspot.com/docs/guides/apps/api-usage/usage-details):
// X-HubSpot-RateLimit-Max and -Remaining over -Interval-Milliseconds, the
// per-second -Secondly and -Secondly-Remaining, and the per-day -Daily and
// -Daily-Remaining.
func (p *parser) hubspot(extras *[]Quota) Quota {
	if p.mask&maskHubSp == 0 {
		return unknownQuota()
	}
	interval := unknownQuota()
	interval.Limit = leastCount(p.get(fHSMax))
	interval.Remaining = leastCount(p.get(fHSRemaining))
	if interval.Limit >= 0 || interval.Remaining >= 0 {
		interval.Window, _ = longestDelay(p.get(fHSInterval), time.Millisecond, math.MaxInt64)
	}
	secondly := unknownQuota()
	secondly.Limit = leastCount(p.get(fHSSecondly))
	secondly.Remaining = leastCount(p.get(fHSSecondlyRemaining))
	if secondly.statesQuota() {
		secondly.Window, secondly.Policy = time.Second, "secondly"
	}
	daily := unknownQuota()
	daily.Limit = leastCount(p.get(fHSDaily))
	daily.Remaining = leastCount(p.get(fHSDailyRemaining))
	if daily.statesQuota() {
		daily.Window, daily.Policy = 24*time.Hour, "daily"
	}
	all := [...]Quota{interval, secondly, daily}
	pick := -1
	for i, q := range all {
		if !q.statesQuota() {
			continue
		}
		if pick < 0 {
			pick = i
		} else if extras != nil {
			addExtra(extras, q)
		}
	}
	if pick < 0 {
		return unknownQuota()
	}
	return all[pick]
}

// shopify reads X-Shopify-Shop-Api-Call-Limit: used/limit
// (https://shopify.dev/docs/api/usage/rate-limits, REST Admin API).
func (p *parser) shopify() Quota {
	if p.mask&(1<<fShopify) == 0 {
		return unknownQuota()
	}
	q := unknownQuota()
	for e := (elems{vals: p.get(fShopify)}); ; {
		s, ok := e.next()
		if !ok {
			break
		}
		if lim, rem, ok := usedOfLimit(s); ok {
			q.Limit = leastStated(q.Limit, lim)
			q.Remaining = leastStated(q.Remaining, rem)
		}
	}
	return q
}

// salesforce reads Sforce-Limit-Info: api-usage=25/5000 and its per-app
// variants (https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/headers_api_usage.htm).
// The org-wide api-usage is the request quota; the others are extras.
func (p *parser) salesforce(extras *[]Quota) Quota {
	if p.mask&(1<<fSforce) == 0 {
		return unknownQuota()
	}
	q := unknownQuota()
	for e := (elems{vals: p.get(fSforce)}); ; {
		s, ok := e.next()
		if !ok {
			break
		}
		name, usage, ok := strings.Cut(s, "=")
		if !ok {
			continue
		}
		name = trimOWS(name)
		usage, _, _ = strings.Cut(usage, "(") // per-app-api-usage=17/250(appName=x)
		lim, rem, ok := usedOfLimit(trimOWS(usage))
		if !ok || name == "" {
			continue
		}
		if eqFold(name, "api-usage") {
			q.Limit = leastStated(q.Limit, lim)
			q.Remaining = leastStated(q.Remaining, rem)
			q.Policy = name
		} else if extras != nil {
			addExtra(extras, Quota{Limit: lim, Remaining: rem, Policy: name})
		}
	}
	return q
}

// usedOfLimit reads "used/limit" and returns the limit and what remains.
func usedOfLimit(s string) (limit, remaining float64, ok bool) {
	u, l, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, false
	}
	used, ok1 := parseCount(trimOWS(u))
	limit, ok2 := parseCount(trimOWS(l))
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	return limit, max(limit-used, 0), true
}

// xRateLimit reads the X-RateLimit-* family:
//   - GitHub, https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api:
//     Limit, Remaining, Used, Reset (epoch seconds), Resource;
//   - Discord, https://discord.com/developers/docs/topics/rate-limits:
//     Reset as a float epoch, Reset-After in float seconds (preferred), Bucket;
//   - Reddit, https://github.com/reddit-archive/reddit/wiki/API: Used,
//     Remaining (a float) and Reset in delta seconds, no Limit;
//   - Jira Cloud, https://developer.atlassian.com/cloud/jira/platform/rate-limiting/:
//     Reset as minute-precision ISO 8601, RateLimit-Reason.
func (p *parser) xRateLimit() Quota {
	if p.mask&maskX == 0 {
		return unknownQuota()
	}
	q := unknownQuota()
	q.Limit, q.Window = limitList(p.get(fXLimit), nil)
	q.Remaining = leastCount(p.get(fXRemaining))
	if d, ok := longestDelay(p.get(fXResetAfter), time.Second, maxAhead); ok {
		q.Reset = p.after(d)
	} else if t, ok := p.latestReset(p.get(fXReset)); ok {
		q.Reset = t
	}
	if (q.Limit < 0) != (q.Remaining < 0) && p.mask&(1<<fXUsed) != 0 {
		p.xUsed(&q)
	}
	if p.mask&(1<<fRLReason) != 0 && q.statesQuota() {
		q.Policy = firstValue(p.get(fRLReason))
	}
	return q
}

// xUsed completes from X-RateLimit-Used a quota that states only one of
// its limit and remaining count.
func (p *parser) xUsed(q *Quota) {
	used := greatestCount(p.get(fXUsed))
	switch {
	case used < 0:
	case q.Limit < 0:
		// Reddit states what was used and what is left, not the limit,
		// over a 10-minute window.
		q.Limit = used + q.Remaining
		if !q.Reset.IsZero() && q.Reset.Sub(p.now) <= redditWindow {
			q.Window = redditWindow
		}
	default:
		q.Remaining = max(q.Limit-used, 0)
	}
}

// xRateLimitDash reads X-Rate-Limit-Limit, -Remaining and -Reset (X,
// https://docs.x.com/x-api/fundamentals/rate-limits; Okta,
// https://developer.okta.com/docs/reference/rl-best-practices/, both epoch
// seconds) and Zendesk's X-Rate-Limit
// (https://developer.zendesk.com/api-reference/introduction/rate-limits/).
func (p *parser) xRateLimitDash() Quota {
	if p.mask&maskXDash == 0 {
		return unknownQuota()
	}
	q := p.quotaOf(p.get(fXDLimit), p.get(fXDRemaining), p.get(fXDReset))
	if q.Limit < 0 {
		q.Limit = leastCount(p.get(fZendeskLimit))
	}
	return q
}

// limitList reads a limit header that may use the list form of the early
// IETF drafts, "10, 10;w=1, 1000;w=3600": the effective limit is the least
// parameter-free item (the first item when every item has parameters), and
// the window is that of the first item with the same quota and a w
// parameter. With extras, the other windowed items are appended as quotas.
func limitList(vals []string, extras *[]Quota) (float64, time.Duration) {
	if len(vals) == 1 {
		if v, ok := parseCount(trimOWS(vals[0])); ok { // the usual case
			return v, 0
		}
	}
	if len(vals) == 1 && strings.IndexByte(vals[0], ';') < 0 {
		if v, ok := singleCount(vals); ok { // the usual case
			return v, 0
		}
	}
	limit, first := float64(notStated), float64(notStated)
	for e := (elems{vals: vals}); ; {
		s, ok := e.next()
		if !ok {
			break
		}
		v, _, params, ok := limitItem(s)
		if !ok {
			continue
		}
		if first < 0 {
			first = v
		}
		if !params {
			limit = leastStated(limit, v)
		}
	}
	if limit < 0 {
		limit = first
	}
	if limit < 0 {
		return notStated, 0
	}
	var window time.Duration
	for e := (elems{vals: vals}); ; {
		s, ok := e.next()
		if !ok {
			break
		}
		v, w, _, ok := limitItem(s)
		if !ok || w == 0 {
			continue
		}
		if v == limit && window == 0 {
			window = w
		} else if extras != nil {
			addExtra(extras, Quota{Limit: v, Remaining: notStated, Window: w})
		}
	}
	return limit, window
}

// limitItem reads "10" or "10;w=1": a count and, when it has one, the
// window parameter in seconds.
func limitItem(s string) (v float64, w time.Duration, params, ok bool) {
	num, rest, params := strings.Cut(s, ";")
	v, ok = parseCount(trimOWS(num))
	for rest != "" {
		var param string
		param, rest, _ = strings.Cut(rest, ";")
		if key, val, _ := strings.Cut(trimOWS(param), "="); key == "w" {
			if ip, ns, ok := parseDecimal(val); ok && ns == 0 && ip > 0 {
				w, _ = scaleDuration(ip, 0, time.Second)
			}
		}
	}
	return v, w, params, ok
}

// singleCount reads the usual case of a count header, a single value with no
// list: its count, or -1. It reports false for any other case.
func singleCount(vals []string) (float64, bool) {
	if len(vals) != 1 {
		return 0, false
	}
	s := trimOWS(vals[0])
	if v, ok := parseCount(s); ok {
		return v, true // a number has no comma: no need to look for one first
	}
	if strings.IndexByte(s, ',') >= 0 {
		return 0, false
	}
	return notStated, true
}

// leastCount returns the least count among a header's elements, or -1.
func leastCount(vals []string) float64 { return foldCount(vals, leastStated) }

// greatestCount returns the greatest count among a header's elements, or -1:
// the conservative reading of a "used" count.
func greatestCount(vals []string) float64 {
	return foldCount(vals, func(a, b float64) float64 { return max(a, b) })
}

// foldCount combines the counts among a header's elements with pick, from
// -1; a single value skips the list parse.
func foldCount(vals []string, pick func(a, b float64) float64) float64 {
	if v, ok := singleCount(vals); ok {
		return v
	}
	acc := float64(notStated)
	for e := (elems{vals: vals}); ; {
		s, ok := e.next()
		if !ok {
			return acc
		}
		if v, ok := parseCount(s); ok {
			acc = pick(acc, v)
		}
	}
}

// leastStated returns the lesser of two counts, either of which may be -1.
func leastStated(a, b float64) float64 {
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	}
	return min(a, b)
}

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// firstValue returns the first non-empty field line, trimmed.
func firstValue(vals []string) string {
	for _, v := range vals {
		if v = trimOWS(v); v != "" {
			return v
		}
	}
	return ""
}

// Values: numbers, durations, timestamps.

// parseDecimal parses a strict non-negative decimal: ASCII digits with an
// optional fraction, at most 18 integer digits. It returns the integer part
// and the fraction in nanoseconds (digits past the ninth are ignored).
func parseDecimal(s string) (ip uint64, ns int64, ok bool) {
	i, end := 0, min(len(s), 19)
	for ; i < end; i++ {
		d := s[i] - '0'
		if d > 9 {
			break
		}
		ip = ip*10 + uint64(d)
	}
	if i == 0 || i == 19 { // no digits, or more than 18
		return 0, 0, false
	}
	if i == len(s) {
		return ip, 0, true
	}
	if s[i] != '.' || i+1 == len(s) {
		return 0, 0, false
	}
	scale := int64(1e8)
	for i++; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, 0, false
		}
		ns += int64(s[i]-'0') * scale
		scale /= 10
	}
	return ip, ns, true
}

// parseCount parses a strict count (see parseDecimal).
func parseCount(s string) (float64, bool) {
	ip, ns, ok := parseDecimal(s)
	if !ok {
		return 0, false
	}
	return float64(ip) + float64(ns)/1e9, true
}

// delay returns ip.ns units as a wait, or false when it overflows or lies
// beyond maxAhead.
func delay(ip uint64, ns int64, unit time.Duration) (time.Duration, bool) {
	d, ok := scaleDuration(ip, ns, unit)
	return d, ok && d <= maxAhead
}

// scaleDuration returns ip.ns units as a Duration, or false on overflow.
func scaleDuration(ip uint64, ns int64, unit time.Duration) (time.Duration, bool) {
	if ip > uint64(math.MaxInt64/unit)-1 {
		return 0, false
	}
	return time.Duration(ip)*unit + time.Duration(ns*int64(unit)/1e9), true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isAlpha(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// A stdBudget bounds what one response hands to the standard library's
// time parsers (time.Parse, http.ParseTime, time.ParseDuration), whose
// errors allocate several times the value they refuse: a 4 MiB non-date
// cost 25 MB. They see no value longer than maxStdLen bytes (no date or
// duration a server sends is longer), and nothing once maxStdRefusals calls
// failed; the forms read without them (numbers, the IMF-fixdate and its
// zoned variants) are read regardless.
type stdBudget struct{ refused int }

const (
	maxStdLen      = 40
	maxStdRefusals = 16
)

// allows reports whether s may be handed to a standard-library parser.
func (b *stdBudget) allows(s string) bool {
	return len(s) <= maxStdLen && b.refused < maxStdRefusals
}

// ok records the outcome of a standard-library parse and reports success.
func (b *stdBudget) ok(err error) bool {
	if err != nil {
		b.refused++
	}
	return err == nil
}

// parseGoDuration reads a reset in time.Duration syntax as OpenAI sends it
// ("6m0s", "12ms", "7.66s"), optionally led by whole days ("1d2h"). Signs
// and fractions without a leading digit are rejected.
func parseGoDuration(s string, b *stdBudget) (time.Duration, bool) {
	if s == "" || !isDigit(s[0]) || !isAlpha(s[len(s)-1]) || !b.allows(s) || strings.ContainsAny(s, "+-") {
		return 0, false
	}
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		ip, ns, ok := parseDecimal(s[:i])
		if !ok || ns != 0 || ip > uint64(maxAhead/(24*time.Hour)) {
			return 0, false
		}
		days = time.Duration(ip) * 24 * time.Hour
		if s = s[i+1:]; s == "" {
			return days, true
		}
		if !isDigit(s[0]) {
			return 0, false
		}
	}
	d, err := time.ParseDuration(s)
	if !b.ok(err) || d < 0 || d > math.MaxInt64-days {
		return 0, false
	}
	return days + d, true
}

// parseTimestamp reads an absolute reset: RFC 3339 (Anthropic), ISO 8601
// with minute precision (Jira: 2024-01-01T10:00Z) or an HTTP-date.
func parseTimestamp(s string, b *stdBudget) (time.Time, bool) {
	if len(s) >= 16 && s[4] == '-' && isDigit(s[0]) {
		for _, layout := range [...]string{time.RFC3339, "2006-01-02T15:04Z07:00", "2006-01-02 15:04:05Z07:00"} {
			if !b.allows(s) {
				break
			}
			if t, err := time.Parse(layout, s); b.ok(err) {
				return t, true
			}
		}
		return time.Time{}, false
	}
	return parseHTTPDate(s, b)
}

// parseHTTPDate reads an HTTP-date (RFC 9110 §5.6.7). The preferred
// IMF-fixdate is parsed without allocating, as is its layout with another
// zone (see zonedUnix); the obsolete RFC 850 and ANSI C forms go to
// http.ParseTime, and the JavaScript Date.toString form some APIs send
// ("Tue Feb 16 2021 09:02:42 GMT+0100 (CET)", Lemlist) is read too.
func parseHTTPDate(s string, b *stdBudget) (time.Time, bool) {
	if t, ok := parseIMFFixdate(s); ok {
		return t, true
	}
	if sec, ok := zonedUnix(s); ok {
		return time.Unix(sec, 0).UTC(), true
	}
	if len(s) < 20 || !isAlpha(s[0]) {
		return time.Time{}, false
	}
	// The JavaScript form ends in a zone name of any length: its date is
	// read up to the offset after GMT.
	if i := strings.Index(s[:min(len(s), maxStdLen)], " GMT"); i > 0 && i+9 <= len(s) && (s[i+4] == '+' || s[i+4] == '-') {
		if js := s[:i+9]; b.allows(js) {
			t, err := time.Parse("Mon Jan 02 2006 15:04:05 GMT-0700", js)
			if b.ok(err) {
				return t, true
			}
		}
	}
	if !b.allows(s) {
		return time.Time{}, false
	}
	t, err := http.ParseTime(s)
	return t, b.ok(err)
}

func monthIndex(s string) int {
	if len(s) != 3 {
		return -1
	}
	switch uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 {
	case 'J' | 'a'<<8 | 'n'<<16:
		return 0
	case 'F' | 'e'<<8 | 'b'<<16:
		return 1
	case 'M' | 'a'<<8 | 'r'<<16:
		return 2
	case 'A' | 'p'<<8 | 'r'<<16:
		return 3
	case 'M' | 'a'<<8 | 'y'<<16:
		return 4
	case 'J' | 'u'<<8 | 'n'<<16:
		return 5
	case 'J' | 'u'<<8 | 'l'<<16:
		return 6
	case 'A' | 'u'<<8 | 'g'<<16:
		return 7
	case 'S' | 'e'<<8 | 'p'<<16:
		return 8
	case 'O' | 'c'<<8 | 't'<<16:
		return 9
	case 'N' | 'o'<<8 | 'v'<<16:
		return 10
	case 'D' | 'e'<<8 | 'c'<<16:
		return 11
	}
	return -1
}

func isDayAbbrev(s string) bool {
	if len(s) != 3 {
		return false
	}
	switch uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 {
	case 'M' | 'o'<<8 | 'n'<<16, 'T' | 'u'<<8 | 'e'<<16, 'W' | 'e'<<8 | 'd'<<16,
		'T' | 'h'<<8 | 'u'<<16, 'F' | 'r'<<8 | 'i'<<16, 'S' | 'a'<<8 | 't'<<16,
		'S' | 'u'<<8 | 'n'<<16:
		return true
	}
	return false
}

// parseIMFFixdate parses "Sun, 06 Nov 1994 08:49:37 GMT" exactly.
func parseIMFFixdate(s string) (time.Time, bool) {
	sec, ok := imfUnix(s)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(sec, 0).UTC(), true
}

// imfUnix reads an IMF-fixdate as Unix seconds. A leap second (:60, which
// RFC 9110 §5.6.7 allows) reads as the second after.
func imfUnix(s string) (int64, bool) {
	if len(s) != 29 || s[25:] != " GMT" {
		return 0, false
	}
	return fixdateUnix(s[:25])
}

// zonedUnix reads, as Unix seconds, the IMF-fixdate layout with a zone
// other than GMT: "UTC" (what Go's time.RFC1123 writes) or a numeric offset
// such as "+0000" or "-0700" (time.RFC1123Z, RFC 5322 §3.3). RFC 9110
// §5.6.7 defines GMT alone, but real servers send these in Date, in
// Retry-After and in resets.
func zonedUnix(s string) (int64, bool) {
	switch {
	case len(s) == 29 && s[25:] == " UTC":
		return fixdateUnix(s[:25])
	case len(s) == 31 && s[25] == ' ' && (s[26] == '+' || s[26] == '-'):
		hh, mm := twoDigits(s, 27), twoDigits(s, 29)
		if hh < 0 || mm < 0 || hh > 23 || mm > 59 {
			return 0, false
		}
		sec, ok := fixdateUnix(s[:25])
		offset := int64(hh*3600 + mm*60)
		if s[26] == '+' {
			offset = -offset // east of Greenwich: UTC is earlier
		}
		return sec + offset, ok
	}
	return 0, false
}

// fixdateUnix reads "Sun, 06 Nov 1994 08:49:37", the IMF-fixdate without
// its zone, as Unix seconds in UTC.
func fixdateUnix(s string) (int64, bool) {
	if len(s) != 25 || s[3] != ',' || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' ||
		s[16] != ' ' || s[19] != ':' || s[22] != ':' || !isDayAbbrev(s[:3]) {
		return 0, false
	}
	m := monthIndex(s[8:11])
	day, c, yl := twoDigits(s, 5), twoDigits(s, 12), twoDigits(s, 14)
	hour, minute, sec := twoDigits(s, 17), twoDigits(s, 20), twoDigits(s, 23)
	if m < 0 || day < 0 || c < 0 || yl < 0 || hour < 0 || minute < 0 || sec < 0 ||
		hour > 23 || minute > 59 || sec > 60 {
		return 0, false
	}
	year := c*100 + yl
	if day < 1 || day > daysIn(m+1, year) {
		return 0, false // 31 Feb
	}
	return daysSinceEpoch(year, m+1, day)*86400 + int64(hour*3600+minute*60+sec), true
}

// twoDigits returns the number s[i:i+2] spells, or -1 if it is not two
// ASCII digits.
func twoDigits(s string, i int) int {
	a, b := int(s[i])-'0', int(s[i+1])-'0'
	if uint(a) > 9 || uint(b) > 9 {
		return -1
	}
	return a*10 + b
}

// daysSinceEpoch returns the number of days from 1970-01-01 to the given
// Gregorian date (month 1 to 12, day 1 to 31), without time.Date's
// normalisation: the days_from_civil algorithm of H. Hinnant.
func daysSinceEpoch(year, month, day int) int64 {
	y := int64(year)
	if month <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400                                    // [0, 399]
	doy := (153*int64((month+9)%12)+2)/5 + int64(day) - 1 // [0, 365], from 1 March
	doe := yoe*365 + yoe/4 - yoe/100 + doy                // [0, 146096]
	return era*146097 + doe - 719468
}

// daysIn returns the number of days in month (1 to 12) of year, Gregorian.
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// trimOWS removes optional whitespace (RFC 9110 §5.6.3) around s.
func trimOWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// elems iterates the comma-separated elements of a header's field lines
// (RFC 9110 §5.3), trimmed, skipping empty ones. A comma right after a lone
// day name ("Wed," "Sunday,") belongs to an HTTP-date and does not split.
type elems struct {
	vals []string
	cur  string
	more bool // cur holds unread text
}

func (e *elems) next() (string, bool) {
	for {
		for !e.more {
			if len(e.vals) == 0 {
				return "", false
			}
			e.cur, e.vals, e.more = e.vals[0], e.vals[1:], true
		}
		s, from := e.cur, 0
		var el string
		for {
			j := strings.IndexByte(s[from:], ',')
			if j < 0 {
				el, e.more = s, false
				break
			}
			j += from
			if isDayName(trimOWS(s[:j])) {
				from = j + 1
				continue
			}
			el, e.cur = s[:j], s[j+1:]
			break
		}
		if el = trimOWS(el); el != "" {
			return el, true
		}
	}
}

func isDayName(s string) bool {
	if len(s) < 3 || len(s) > 9 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlpha(s[i]) {
			return false
		}
	}
	return true
}

// Header names.

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
