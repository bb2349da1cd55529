package throttletest

import (
	"fmt"
	"net/http"
	"time"
)

// Defaults used where a [Config] or [Quota] field is left zero.
const (
	// DefaultLimit is the Limit of a Quota whose Limit is zero or negative.
	DefaultLimit = 10
	// DefaultWindow is the Window of a Quota whose Window is zero or negative.
	DefaultWindow = time.Second
	// DefaultResource is the resource a request belongs to when Config.Route
	// is nil or returns "".
	DefaultResource = "core"
	// MaxLimit is the largest Limit a Quota may state; larger values are
	// lowered to it.
	MaxLimit = 1_000_000_000_000
)

// Dialect is the set of rate-limit headers a [Handler] speaks. Every dialect
// also sends a Date header from the server's clock (see Config.DateSkew).
// The package documentation lists every header and value format.
type Dialect int

const (
	// GitHub sends X-RateLimit-Limit, -Remaining, -Used, -Reset (Unix
	// seconds) and -Resource on every response. A refusal has remaining 0
	// and no Retry-After, as GitHub's primary rate limit does.
	GitHub Dialect = iota

	// IETF sends the headers of the early IETF drafts and of most gateways:
	// RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset (delta seconds)
	// and RateLimit-Policy ("10;w=1") on every response, and Retry-After on
	// refusals.
	IETF

	// IETFStructured sends the structured fields of
	// draft-ietf-httpapi-ratelimit-headers-08 and later: RateLimit-Policy
	// (`"core";q=10;w=1`) and RateLimit (`"core";r=5;t=1`) on every
	// response, and Retry-After on refusals.
	IETFStructured

	// OpenAI sends x-ratelimit-limit-requests, x-ratelimit-remaining-requests
	// and x-ratelimit-reset-requests (a Go duration such as "6m0s" or
	// "1.5s") on every response, and no Retry-After.
	OpenAI

	// RetryAfterOnly sends no quota headers; refusals carry Retry-After
	// (delta seconds).
	RetryAfterOnly

	// None sends no rate-limit headers at all: a refusal is a bare 429 (or
	// Config.RefuseStatus), as nginx's limit_req sends.
	None

	// DateReset sends X-RateLimit-Limit, X-RateLimit-Remaining and
	// X-RateLimit-Reset on every response, the reset as a date rather than
	// a number, and Retry-After as a date on refusals, both in
	// Config.DateFormat, as some servers send them: an absolute time on the
	// server's clock, to the second.
	DateReset

	// Anthropic sends anthropic-ratelimit-requests-limit, -remaining and
	// -reset (RFC 3339, the time the quota will be full again, on the
	// server's clock, to the second), the same for each of Config.Tokens
	// (anthropic-ratelimit-tokens-*, -input-tokens-*, -output-tokens-*),
	// and retry-after (delta seconds) on refusals, as
	// https://docs.anthropic.com/en/api/rate-limits documents.
	Anthropic

	// Spring sends what Spring Cloud Gateway's RedisRateLimiter sends on
	// every response: X-RateLimit-Remaining (the tokens left),
	// X-RateLimit-Replenish-Rate (Limit per second of Window),
	// X-RateLimit-Burst-Capacity (the bucket's capacity, Quota.Burst) and
	// X-RateLimit-Requested-Tokens: 1, and no reset and no Retry-After: how
	// fast the bucket refills says when. It describes a TokenBucket.
	Spring

	// Bucket4j sends what bucket4j-spring-boot-starter's filter sends:
	// X-Rate-Limit-Remaining on every response and nothing else, but
	// X-Rate-Limit-Retry-After-Seconds on refusals (the time until a
	// request is admitted again, rounded by Config.ResetRounding; Bucket4j
	// truncates it, so that a wait under a second says 0). No limit, no
	// reset, no window.
	Bucket4j
)

// String returns the dialect's Go name, such as "GitHub".
func (d Dialect) String() string {
	switch d {
	case GitHub:
		return "GitHub"
	case IETF:
		return "IETF"
	case IETFStructured:
		return "IETFStructured"
	case OpenAI:
		return "OpenAI"
	case RetryAfterOnly:
		return "RetryAfterOnly"
	case None:
		return "None"
	case DateReset:
		return "DateReset"
	case Anthropic:
		return "Anthropic"
	case Spring:
		return "Spring"
	case Bucket4j:
		return "Bucket4j"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// Rounding is how a [Handler] rounds the resets and Retry-After values it
// sends to the resolution of their header: a whole second, or for the
// OpenAI dialect's durations a millisecond.
type Rounding int

const (
	// RoundUp rounds up, so that a client that waits until the stated time
	// is never early; a Retry-After in seconds is at least 1.
	RoundUp Rounding = iota

	// Truncate rounds down, as most real servers do, by integer division or
	// time.Time.Unix: ulule/limiter's X-RateLimit-Reset (the expiry's Unix
	// seconds), go-chi/httprate's Retry-After (int(window.Seconds())), many
	// gateways. A client that waits until the stated reset can be up to a
	// second early and be refused; a Retry-After can be 0.
	Truncate

	// Nearest rounds to the nearest value, halves up: the stated time is up
	// to half a second early or late.
	Nearest

	// NextSecond states the second after the one a time falls in, as
	// Flask-Limiter states its resets (int(reset) + 1): up to a second
	// late, and a whole second late on a whole second. A delta is its
	// whole seconds plus one (so a Retry-After is at least 1), a duration
	// in milliseconds its whole milliseconds plus one.
	NextSecond
)

// String returns the rounding's Go name, such as "RoundUp".
func (r Rounding) String() string {
	switch r {
	case RoundUp:
		return "RoundUp"
	case Truncate:
		return "Truncate"
	case Nearest:
		return "Nearest"
	case NextSecond:
		return "NextSecond"
	}
	return fmt.Sprintf("Rounding(%d)", int(r))
}

// DateFormat is the layout of the dates the DateReset dialect sends.
type DateFormat int

const (
	// IMFFixdate is HTTP's date format, [http.TimeFormat]:
	// "Sat, 01 Jan 2000 00:00:10 GMT". [http.ParseTime] reads it.
	IMFFixdate DateFormat = iota

	// RFC1123UTC is [time.RFC1123] of a UTC time, as a Go server formatting
	// time.Now().UTC() with it sends: "Sat, 01 Jan 2000 00:00:10 UTC".
	// http.ParseTime does not read it.
	RFC1123UTC

	// RFC1123Z is [time.RFC1123Z], a numeric zone:
	// "Sat, 01 Jan 2000 00:00:10 +0000". http.ParseTime does not read it.
	RFC1123Z
)

// String returns the format's Go name, such as "IMFFixdate".
func (f DateFormat) String() string {
	switch f {
	case IMFFixdate:
		return "IMFFixdate"
	case RFC1123UTC:
		return "RFC1123UTC"
	case RFC1123Z:
		return "RFC1123Z"
	}
	return fmt.Sprintf("DateFormat(%d)", int(f))
}

// layout is f's layout for time.Time.Format.
func (f DateFormat) layout() string {
	switch f {
	case RFC1123UTC:
		return time.RFC1123
	case RFC1123Z:
		return time.RFC1123Z
	}
	return http.TimeFormat
}

// SecondaryLimit is an extra limit over all resources together, modelled on
// GitHub's secondary rate limits: a request it refuses gets Status (403 by
// default), a Retry-After header in every dialect, and GitHub's
// secondary-rate-limit JSON body, which go-github reports as an
// AbuseRateLimitError. The dialect's quota headers are still sent and show the
// primary quota untouched: a request refused here does not use it.
//
// The zero SecondaryLimit is off.
type SecondaryLimit struct {
	// Concurrent is the most admitted requests served at once; the request
	// that would be one more is refused. A request is served from its
	// admission until Config.Handler returns, Config.Latency included.
	// Zero or negative: no limit.
	Concurrent int
	// PerMinute is the most requests admitted in any 60-second span.
	// Zero or negative: no limit.
	PerMinute int
	// RetryAfter is the wait the refusal asks for. Zero: for PerMinute, until
	// the oldest admission leaves the span; for Concurrent, one second.
	RetryAfter time.Duration
	// Status is the refusal's status code. Zero: 403 Forbidden.
	Status int
}

// Config describes a fake API. The zero Config is a GitHub-dialect API
// allowing 10 requests per second in fixed windows aligned to its start,
// answering 200 with a small JSON body at once, its resets rounded up.
type Config struct {
	// Quota is the quota of every resource not listed in Resources,
	// DefaultResource included.
	Quota

	// Dialect is the set of rate-limit headers sent. Zero: GitHub.
	Dialect Dialect

	// Resources gives some resources (GitHub's "search", "graphql"...) their
	// own quota. Each resource name returned by Route has its own counter
	// whether or not it is listed here; unlisted ones use Quota.
	Resources map[string]Quota

	// Route names the resource a request counts against. It is called once
	// per request, outside any lock. If nil, or if it returns "", the request
	// counts against DefaultResource. Routing on a credential gives every
	// client its own quota.
	Route func(*http.Request) string

	// RefuseStatus is the status code of a request refused by the quota.
	// Zero: 429 Too Many Requests. GitHub documents 403 or 429 for its
	// primary limit; set 403 to test the older behaviour.
	RefuseStatus int

	// DateSkew is how far the server's clock is ahead of the real one
	// (negative: behind). It shifts the Date header and every absolute time
	// the dialect sends (GitHub's X-RateLimit-Reset, DateReset's dates)
	// alike, so a client that anchors resets on Date is unaffected. Delta
	// headers do not change. AlignClock windows align to this clock.
	DateSkew time.Duration

	// ResetRounding is how every reset and Retry-After sent is rounded to
	// its header's resolution: Unix seconds, delta seconds, dates, and the
	// OpenAI dialect's milliseconds. Zero: RoundUp. Many real servers
	// Truncate. RateLimit-Policy's window is always rounded up.
	ResetRounding Rounding

	// Phase shifts the boundaries of AlignStart and AlignClock windows later
	// by Phase (modulo each quota's Window; negative: earlier), as if the
	// server's process had started at another instant: with Phase 300ms
	// and 1-second windows aligned to the start, the first window ends
	// 300ms after it, and every reset falls between whole seconds. It
	// moves nothing else. Zero: no shift.
	Phase time.Duration

	// ClockTick makes the server read its clock in whole ticks, as servers
	// that cache a timestamp do (gofiber's limiter reads one updated once a
	// second): its windows open and turn, its sliding estimate weighs the
	// old window, and its buckets refill only as a tick passes, and the
	// resets and Retry-After it states are counted from the last tick. The
	// ticks fall every ClockTick after the handler's start, shifted by
	// Phase. Date and Stats keep the true time. Zero or negative: the clock
	// is read to the nanosecond.
	ClockTick time.Duration

	// BareRefusals leaves the quota headers off refusals: they carry Date
	// and, in the dialects that send one, Retry-After only, as gofiber's
	// limiter answers them. Successes carry the dialect's headers as usual.
	BareRefusals bool

	// NoPolicy leaves RateLimit-Policy off the IETF dialect's answers, as
	// most servers that send the draft's RateLimit-Limit, -Remaining and
	// -Reset do (gofiber, many gateways): the window is then known from
	// the resets alone. Other dialects are not affected.
	NoPolicy bool

	// RetryAfterWindow makes the Retry-After of a request refused by the
	// quota the quota's whole Window (rounded by ResetRounding), as
	// go-chi/httprate sends it, instead of the time until a request would
	// be admitted. Shed and Secondary refusals are not affected.
	RetryAfterWindow bool

	// RetryAfterEvery puts Retry-After on every answer of the quota, in
	// every dialect but None: on an admitted request the time until its
	// quota resets, on a refused one the time until it admits again, both
	// in seconds to the millisecond ("2.873"; ResetRounding rounds the
	// millisecond), as rate-limiter-flexible's documented headers send
	// msBeforeNext ÷ 1000 beside a reset in whole seconds. Shed and
	// Secondary refusals are not affected.
	RetryAfterEvery bool

	// DateFormat is the layout of the DateReset dialect's dates. Zero:
	// IMFFixdate. The Date header is always http.TimeFormat.
	DateFormat DateFormat

	// Hostile makes every quota header and Retry-After carry absurd values
	// (a Retry-After of 999999999 seconds, a reset decades away, negative and
	// overflowing counts, a zero window) while the real quota is still
	// enforced. Which headers are sent does not change, nor does Date. The
	// package documentation lists the values per dialect.
	Hostile bool

	// ShedEvery, if positive, answers every ShedEvery-th request that the
	// quota and the secondary limit would admit with 503 Service Unavailable
	// and a Retry-After of ShedRetryAfter (not sent by the None dialect),
	// as an overloaded server shedding load. A shed request does not use the
	// quota.
	ShedEvery int
	// ShedRetryAfter is the Retry-After of a shed request. Zero: one second.
	ShedRetryAfter time.Duration

	// Secondary is an optional GitHub-style secondary limit. Zero: off.
	Secondary SecondaryLimit

	// Latency delays every answer by this long, after the request has been
	// counted and before anything is written, as if the server took that
	// long. The wait is a timer, so inside a testing/synctest bubble it is
	// virtual time; it ends early, with nothing written, if the request's
	// context is done, and the request still counts, as on a real server.
	// Over loopback it is real time. Zero: no delay.
	Latency time.Duration

	// Jitter adds to every answer's Latency a pseudo-random extra in
	// [0, Jitter), so that answers to requests sent together arrive in
	// another order than they were sent, as over a real network. The n-th
	// request to arrive gets the n-th draw of a source seeded with Seed:
	// in a testing/synctest bubble, the same requests sent in the same
	// order are answered in the same shuffled order on every run. The
	// request is counted at its arrival, before the wait, as with Latency.
	// Zero or negative: no jitter.
	Jitter time.Duration
	// Seed seeds Jitter's pseudo-random source (math/rand/v2's PCG); zero
	// is a seed like any other.
	Seed uint64

	// Tokens are quotas counted in the tokens of chat requests, beside the
	// request quota: a request must fit every one. The OpenAI dialect
	// states a quota named "tokens", the Anthropic dialect those named
	// "tokens", "input-tokens" and "output-tokens"; NewHandler panics on
	// another name, and on SlidingWindow, LeakyBucket and SlidingLog.
	// With Tokens, every request's body is read as a chat request (see
	// [TokenQuota]) and, with no Config.Handler, answered with the
	// dialect's chat response, its usage included.
	Tokens []TokenQuota
	// OutputShare is the share of a chat request's max_tokens its answer
	// uses, rounded up. Zero, or outside (0, 1]: one half.
	OutputShare float64

	// Handler answers admitted requests; the rate-limit headers are already
	// set on its ResponseWriter. If nil, an admitted request gets 200 OK with
	// the JSON body {"ok":true,"resource":"<name>"}.
	Handler http.Handler
}
