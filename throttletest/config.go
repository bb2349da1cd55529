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

// Algorithm is how a [Quota] counts requests.
type Algorithm int

const (
	// FixedWindow counts requests in consecutive windows of Quota.Window,
	// aligned to the handler's start. A window admits Limit requests; its
	// count drops to zero when the next window begins. The reset time is the
	// end of the current window.
	FixedWindow Algorithm = iota

	// SlidingWindow is the sliding-window counter of go-chi/httprate and of
	// many API gateways: the estimate
	//
	//	previousWindowCount × (1 − elapsedInCurrentWindow/Window) + currentWindowCount
	//
	// must stay below Limit for a request to be admitted. Remaining is
	// Limit − ⌈estimate⌉ (never below 0). The reset time is the end of the
	// current fixed window, as real servers report it, although the estimate
	// may still be at the limit then: a client that trusts the reset blindly
	// can be refused again.
	SlidingWindow

	// TokenBucket holds up to Limit tokens and refills Limit tokens per Window,
	// continuously; a request takes one token. It starts full. Remaining is
	// the whole tokens left; the reset time is when the bucket will be full
	// again, and Retry-After (when a dialect sends it) is when the next token
	// arrives.
	TokenBucket
)

// String returns the algorithm's Go name, such as "FixedWindow".
func (a Algorithm) String() string {
	switch a {
	case FixedWindow:
		return "FixedWindow"
	case SlidingWindow:
		return "SlidingWindow"
	case TokenBucket:
		return "TokenBucket"
	}
	return fmt.Sprintf("Algorithm(%d)", int(a))
}

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

	// None sends no rate-limit headers at all: a refusal is a bare 429.
	None
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
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// Quota is the limit one resource enforces: Limit requests per Window,
// counted by Algorithm.
//
// The zero Quota is DefaultLimit (10) requests per DefaultWindow (1s) in
// fixed windows.
type Quota struct {
	// Limit is the number of requests allowed per Window. Zero or negative:
	// DefaultLimit. Above MaxLimit: MaxLimit.
	Limit int
	// Window is the length of the quota's window (and, for TokenBucket, the
	// time to refill Limit tokens). Zero or negative: DefaultWindow. Dialects
	// that state the window in seconds round it up to a whole second.
	Window time.Duration
	// Algorithm is how requests are counted. Zero: FixedWindow.
	Algorithm Algorithm
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
// allowing 10 requests per second in fixed windows, answering 200 with a small
// JSON body.
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
	// the dialect sends (GitHub's X-RateLimit-Reset) alike, so a client that
	// anchors resets on Date is unaffected. Delta headers do not change.
	DateSkew time.Duration

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

	// Handler answers admitted requests; the rate-limit headers are already
	// set on its ResponseWriter. If nil, an admitted request gets 200 OK with
	// the JSON body {"ok":true,"resource":"<name>"}.
	Handler http.Handler
}
