// Package throttletest is a fake rate-limited HTTP API for testing clients
// that must stay within a server's quota.
//
// A [Handler] enforces a [Quota] per resource (fixed window, sliding window
// counter or token bucket), answers what exceeds it with 429, and states its
// quota in one of several header [Dialect]s. It counts what it admitted and
// refused ([Handler.Stats]) and misbehaves on demand: a skewed clock, absurd
// header values, load shedding, a GitHub-style secondary limit, latency.
//
// It runs two ways:
//
//   - In memory: a Handler is an [http.RoundTripper] ([Handler.RoundTrip])
//     that calls itself on the caller's goroutine. Its quota is computed from
//     time.Now alone (no timers, no goroutines), so a client driven against
//     it inside a testing/synctest bubble sees exact, virtual time.
//   - Over loopback: [NewServer] and [NewTestServer] serve the handler with
//     net/http/httptest on a random port.
//
// This package does not import the throttle package: it is the server side.
//
// # Dialects
//
// Every response carries Date, from the server's clock (the real time plus
// Config.DateSkew), in http.TimeFormat. Besides, on every response whatever
// its status (2xx, 429, 403 and 503):
//
//	GitHub          X-RateLimit-Limit: 10          (the quota's Limit)
//	                X-RateLimit-Remaining: 7       (requests left)
//	                X-RateLimit-Used: 3            (Limit − Remaining)
//	                X-RateLimit-Reset: 946684801   (Unix seconds, server clock, rounded up)
//	                X-RateLimit-Resource: core     (the resource name)
//	IETF            RateLimit-Limit: 10
//	                RateLimit-Remaining: 7
//	                RateLimit-Reset: 1             (seconds until reset, rounded up)
//	                RateLimit-Policy: 10;w=1       (Limit; Window in seconds, rounded up)
//	IETFStructured  RateLimit-Policy: "core";q=10;w=1
//	                RateLimit: "core";r=7;t=1      (remaining; seconds until reset)
//	OpenAI          X-Ratelimit-Limit-Requests: 10
//	                X-Ratelimit-Remaining-Requests: 7
//	                X-Ratelimit-Reset-Requests: 1s (time until reset, a Go duration
//	                                                rounded up to the millisecond: 6m0s, 1.5s)
//	RetryAfterOnly  nothing
//	None            nothing
//
// A request refused by the quota gets 429 (or Config.RefuseStatus) with
// Remaining 0. It carries Retry-After (seconds, rounded up, at least 1: the
// time until the quota admits a request again, or, for SlidingWindow, until
// the current window ends) in the IETF, IETFStructured and RetryAfterOnly
// dialects only: GitHub's primary limit and OpenAI send none, and None is a
// bare 429. The GitHub dialect's body is GitHub's JSON error; other bodies
// are plain text.
//
// A shed request (Config.ShedEvery) gets 503 with Retry-After in every
// dialect but None. A request refused by Config.Secondary gets 403 with
// Retry-After in every dialect, and GitHub's secondary-limit JSON body.
//
// # Hostile
//
// With Config.Hostile the same headers are sent, with these values, while
// the real quota is still enforced:
//
//	Retry-After                         999999999
//	X-RateLimit-Limit, RateLimit-Limit,
//	  X-Ratelimit-Limit-Requests, q=    18446744073709551616
//	X-RateLimit-Remaining, RateLimit-Remaining,
//	  X-Ratelimit-Remaining-Requests, r= -1
//	X-RateLimit-Used                    NaN
//	X-RateLimit-Reset                   99999999999 (the year 5138)
//	RateLimit-Reset, t=                 999999999
//	X-Ratelimit-Reset-Requests          2562047h47m16.854775807s
//	RateLimit-Policy (IETF)             18446744073709551616;w=0
//	w= (IETFStructured)                 0
//
// # Virtual time
//
// Inside a testing/synctest bubble, create the Handler in the bubble and use
// it as the client's transport; time.Sleep or a waiting client advances the
// virtual clock, and every header value is exact:
//
//	synctest.Test(t, func(t *testing.T) {
//		h := throttletest.NewHandler(throttletest.Config{})
//		client := &http.Client{Transport: h}
//		// ... drive the client; assert on responses and h.Stats().
//	})
package throttletest
