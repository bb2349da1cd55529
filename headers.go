package throttle

import (
	"net/http"
	"slices"
	"time"
)

// maxQuotas bounds what one response can make ParseQuotas return, and
// maxMembers the members kept from one structured field: no real API states
// more, and a hostile megabyte of header must cost linear time.
const (
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
//  1. IETF RateLimit fields, every draft, the latest first. The structured
//     fields of draft-ietf-httpapi-ratelimit-headers-08 and later,
//     RateLimit-Policy: "burst";q=100;w=60 and RateLimit: "burst";r=50;t=30,
//     items linked by name: of the request-unit policies named in RateLimit
//     (no qu parameter, or qu="requests") the one with the least remaining
//     is chosen, the first listed on a tie. Draft-07's RateLimit: limit=100,
//     remaining=50, reset=5, with RateLimit-Policy: 100;w=60 giving the
//     window. Drafts up to 06: RateLimit-Limit, -Remaining, -Reset and
//     RateLimit-Policy, including the early list form RateLimit-Limit: 10,
//     10;w=1, 1000;w=3600 whose parameter-free item is the effective limit;
//     GitLab's epoch RateLimit-Reset, RateLimit-ResetTime, -Observed, -Name.
//  2. Named request quotas: OpenAI's x-ratelimit-{limit,remaining,reset}-requests,
//     Anthropic's anthropic-ratelimit-requests-{limit,remaining,reset},
//     Linear's X-RateLimit-Requests-{Limit,Remaining,Reset}.
//  3. Kong: X-RateLimit-Limit-Minute and X-RateLimit-Remaining-Minute for
//     each period (Second to Year); the period with the least remaining, its
//     length the window (none for a calendar month or year), the period's
//     name the Policy.
//  4. HubSpot: X-HubSpot-RateLimit-Max/-Remaining/-Interval-Milliseconds,
//     then -Secondly, then -Daily.
//  5. Shopify: X-Shopify-Shop-Api-Call-Limit: used/limit.
//  6. Salesforce: Sforce-Limit-Info: api-usage=used/limit.
//  7. X-RateLimit-Limit/-Remaining/-Reset/-Used: GitHub, Discord (with
//     X-RateLimit-Reset-After, preferred over -Reset), Reddit (no limit:
//     Limit is Used+Remaining and the window 10 minutes), Jira (ISO 8601
//     reset, RateLimit-Reason as Policy) and the many APIs that copy them.
//     Token buckets that state their refill: Spring Cloud Gateway's
//     X-RateLimit-Replenish-Rate, -Burst-Capacity and -Requested-Tokens, and
//     Atlassian Data Center's X-RateLimit-FillRate per
//     X-RateLimit-Interval-Seconds. Limit and Remaining are then in requests,
//     the window is the time the bucket takes to fill, and an unstated reset
//     is when it will be full.
//  8. X-Rate-Limit-Limit/-Remaining/-Reset (X, Okta, Bucket4j) and Zendesk's
//     X-Rate-Limit.
//
// The first dialect that states a count, reset or window supplies the Quota;
// a later one fills in fields it left unstated only when both describe the
// same quota: they agree on Limit or Remaining and contradict each other on
// none of Limit, Remaining, Window and Policy. [ParseQuotas] returns the
// quotas that differ.
//
// Retry-After (delay-seconds, or an HTTP-date measured against the Date
// header), X-RateLimit-Retry-After and Bucket4j's
// X-Rate-Limit-Retry-After-Seconds fill RetryAfter; retry-after-ms (OpenAI,
// Azure) and Traefik's X-Retry-In (a Go duration), being precise forms of
// the same statement, are preferred when present. X-RateLimit-Resource
// (GitHub) or X-RateLimit-Bucket (Discord) fill Scope.
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
// anchored to the Date header when it is present, within a day of now and
// more than two seconds from it (a server clock that is off); a
// reset up to two seconds in the past is kept as it is (servers truncate
// resets to the second), one up to two minutes in the past means now, one
// further in the past is not stated. A reset or Retry-After more than ten years away, in whatever
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
	p := newParser(now)
	p.collect(h, false)
	q := unknownQuota()
	p.run(&choice{primary: &q})
	return q
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
	primary := unknownQuota()
	var others, extras []Quota
	p.run(&choice{primary: &primary, all: true, others: &others, extras: &extras})
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
		sanitize(&q, p.now)
		out = append(out, q)
	}
	return out
}

// A dialect is one way servers state their quota. The response is read in
// it when it has one of the dialect's fields.
type dialect struct {
	name   string // how its item in the ParseHeaders list starts (TestDialectsDocumented)
	fields uint64 // fieldSet of the fields that make the dialect present
	read   reader
}

// dialects are in their order of precedence: a new dialect is a row here,
// an item in the ParseHeaders list, a reader, and its fields' rows in
// families.
var dialects = [...]dialect{
	{"IETF RateLimit fields",
		fieldSet(fRL, fRLPolicy, fRLLimit, fRLRemaining, fRLReset, fRLResetTime, fRLObserved), readIETF},
	{"Named request quotas",
		fieldSet(fReqLimit, fReqRemaining, fReqReset, fNamed), readNamed},
	{"Kong", fieldSet(fPeriod), readKong},
	{"HubSpot",
		fieldSet(fHSMax, fHSRemaining, fHSSecondly, fHSSecondlyRemaining, fHSDaily, fHSDailyRemaining), readHubSpot},
	{"Shopify", fieldSet(fShopify), readShopify},
	{"Salesforce", fieldSet(fSforce), readSalesforce},
	{"X-RateLimit-", fieldSet(fXLimit, fXRemaining, fXReset, fXUsed, fXResetAfter,
		fXReplenish, fXBurst, fXFillRate, fXInterval), readX},
	{"X-Rate-Limit-", fieldSet(fXDLimit, fXDRemaining, fXDReset, fZendeskLimit), readXDash},
}

// The fields read beside the dialects. Each is read only when the response
// has one: retryAfter costs some 30 ns on a response without
// (BenchmarkParseHeadersIETFStructured).
var (
	retryFields = fieldSet(fRetryAfter, fRetryAfterMs, fRetryIn, fXRetryAfter)
	scopeFields = fieldSet(fXResource, fXBucket)
)

// A reader names the method that reads a dialect.
type reader uint8

const (
	readIETF reader = iota
	readNamed
	readKong
	readHubSpot
	readShopify
	readSalesforce
	readX
	readXDash
)

// read adds to c what the response says in the dialect r reads. It is a
// switch rather than a function in the table because a call through a
// function value would move p and c to the heap
// (TestParseHeadersGitHubAllocs).
func (p *parser) read(r reader, c *choice) {
	switch r {
	case readIETF:
		p.ietf(c)
	case readNamed:
		p.namedQuotas(c)
	case readKong:
		p.kong(c)
	case readHubSpot:
		p.hubspot(c)
	case readShopify:
		p.shopify(c)
	case readSalesforce:
		p.salesforce(c)
	case readX:
		p.xRateLimit(c)
	case readXDash:
		p.xRateLimitDash(c)
	}
}

// run reads every dialect the response has into c, in order, then
// RetryAfter and Scope, and leaves c.primary finished.
func (p *parser) run(c *choice) {
	for i := range dialects {
		if d := &dialects[i]; p.mask&d.fields != 0 {
			p.read(d.read, c)
		}
	}
	if p.mask&retryFields != 0 {
		c.primary.RetryAfter = p.retryAfter()
	}
	if p.mask&scopeFields != 0 {
		c.primary.Scope = p.scope()
	}
	sanitize(c.primary, p.now)
}

// parser holds one response's header values and the arrival time.
type parser struct {
	fields
	now       time.Time
	nowSec    int64 // now as Unix seconds and nanoseconds: server times are
	nowNsec   int64 // compared in these, sparing time.Time's checked arithmetic
	dateSec   int64 // the response's Date, Unix seconds, when dateState is 1
	dateState int8  // 0: not parsed yet; 1: date is usable; -1: absent or unusable
	std       stdBudget
}

func newParser(now time.Time) parser {
	return parser{now: now, nowSec: now.Unix(), nowNsec: int64(now.Nanosecond())}
}

// scope reads GitHub's X-RateLimit-Resource or Discord's X-RateLimit-Bucket.
func (p *parser) scope() string {
	if s := firstValue(p.get(fXResource)); s != "" {
		return s
	}
	return firstValue(p.get(fXBucket))
}
