// Package throttletest is a fake rate-limited HTTP API for testing clients
// that must stay within a server's quota.
//
// A [Handler] enforces a [Quota] per resource (fixed window, sliding window
// counter, token bucket, GCRA or leaky bucket), answers what exceeds it with
// 429, and states its quota in one of several header [Dialect]s. It counts
// what it admitted and refused ([Handler.Stats]) and misbehaves on demand:
// a skewed clock, absurd header values, load shedding, a GitHub-style
// secondary limit, latency. By default it is kinder than real servers; the
// options of the section "Real servers" take that kindness away.
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
//	                X-RateLimit-Reset: 946684801   (Unix seconds, server clock)
//	                X-RateLimit-Resource: core     (the resource name)
//	IETF            RateLimit-Limit: 10
//	                RateLimit-Remaining: 7
//	                RateLimit-Reset: 1             (seconds until reset)
//	                RateLimit-Policy: 10;w=1       (Limit; Window in seconds, rounded up)
//	IETFStructured  RateLimit-Policy: "core";q=10;w=1
//	                RateLimit: "core";r=7;t=1      (remaining; seconds until reset)
//	OpenAI          X-Ratelimit-Limit-Requests: 10
//	                X-Ratelimit-Remaining-Requests: 7
//	                X-Ratelimit-Reset-Requests: 1s (time until reset, a Go duration
//	                                                to the millisecond: 6m0s, 1.5s)
//	                X-Ratelimit-{Limit,Remaining,Reset}-Tokens  (the same, for
//	                                                Config.Tokens' "tokens" quota)
//	Anthropic       Anthropic-Ratelimit-Requests-Limit: 10
//	                Anthropic-Ratelimit-Requests-Remaining: 7
//	                Anthropic-Ratelimit-Requests-Reset: 2000-01-01T00:00:01Z
//	                                               (RFC 3339, server clock, to the second:
//	                                                when the quota is full again)
//	                Anthropic-Ratelimit-{Tokens,Input-Tokens,Output-Tokens}-{Limit,Remaining,Reset}
//	                                               (the same, for each of Config.Tokens)
//	Spring          X-RateLimit-Remaining: 7       (tokens left)
//	                X-RateLimit-Replenish-Rate: 10 (Limit per second of Window)
//	                X-RateLimit-Burst-Capacity: 10 (the capacity, Quota.Burst)
//	                X-RateLimit-Requested-Tokens: 1
//	Bucket4j        X-Rate-Limit-Remaining: 7      (and only on refusals
//	                X-Rate-Limit-Retry-After-Seconds: 1, the wait for a request,
//	                                                rounded by Config.ResetRounding)
//	RetryAfterOnly  nothing
//	None            nothing
//	DateReset       X-RateLimit-Limit: 10
//	                X-RateLimit-Remaining: 7
//	                X-RateLimit-Reset: Sat, 01 Jan 2000 00:00:01 GMT
//	                                               (a date, server clock, in Config.DateFormat:
//	                                                also "... 00:00:01 UTC" or "... 00:00:01 +0000")
//
// Every reset and Retry-After is rounded to its header's resolution by
// Config.ResetRounding: up by default (a client that waits until the stated
// time is never early), or truncated or to the nearest, as real servers
// send them. The limit stated is Quota.Limit, except for GCRA and
// LeakyBucket, which state their capacity, Quota.Burst. The reset is the end
// of the current window, for the buckets the time they will be full, and
// for SlidingLog the time the log will be empty.
//
// A request refused by the quota gets 429 (or Config.RefuseStatus) with
// Remaining 0 (or, refused by a token quota, what that quota has left). It
// carries Retry-After (the time until the quota admits a request again, or
// one of its size for a token quota, or, for SlidingWindow, until the
// current window ends; with Config.RetryAfterWindow, the whole window) in
// the IETF, IETFStructured, RetryAfterOnly, DateReset and Anthropic
// dialects only: GitHub's primary limit and OpenAI send none, and None is a
// bare 429. It is in seconds (at least 1 when rounded up), except in
// DateReset, which sends a date. With Config.RetryAfterEvery every dialect
// but None sends it, on admitted answers too (the time until the quota
// resets), in seconds to the millisecond. The GitHub dialect's body is
// GitHub's JSON error; other bodies are plain text.
//
// A shed request (Config.ShedEvery) gets 503 with Retry-After in every
// dialect but None. A request refused by Config.Secondary gets 403 with
// Retry-After in every dialect, and GitHub's secondary-limit JSON body.
//
// # Token quotas
//
// Config.Tokens adds quotas counted in the tokens of chat requests (see
// [TokenQuota]): the handler reads each request's JSON body as OpenAI's chat
// completions or Anthropic's messages, charges its prompt (one token per 4
// bytes, 3 more per message) and max_tokens when it arrives, and, in the
// Anthropic dialect, gives back the output tokens the answer did not use
// (Config.OutputShare of max_tokens) once answered. A request must fit the
// request quota and every token quota; a refusal is charged nothing. With
// no Config.Handler the answer is the dialect's chat response with its
// usage. Stats.Tokens counts what each token quota counted.
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
//	X-RateLimit-Reset, Retry-After
//	  (DateReset)                       Fri, 31 Dec 9999 23:59:59 GMT (in Config.DateFormat)
//
// # Real servers
//
// The zero Config is kind: its windows start with the handler, its resets
// are rounded up, its Retry-After is exact, and in a testing/synctest bubble
// every answer arrives at the instant its request was sent. A client tuned
// to that alone fails on real servers. These options model them:
//
//	Config.ResetRounding = Truncate   resets and Retry-After up to a second early
//	Config.ResetRounding = NextSecond int(reset) + 1: up to a second late, a whole
//	                                  second on a whole second
//	Config.Phase                      windows that end at any sub-second instant
//	Quota.Align = AlignClock          windows on the server's clock (Truncate(Window))
//	Quota.Align = AlignFirstRequest   a window opens at the first request after
//	                                  the last one ended: not contiguous
//	Config.RetryAfterWindow           Retry-After is the whole window
//	Quota.CountRefused                a sliding window or log that counts its refusals
//	Quota.RoundEstimate               a sliding window that refuses just after its turn
//	Quota.Block                       a refusal blocks the quota for a while, then
//	                                  it starts over (NestJS's throttler)
//	Config.ClockTick                  a server that reads a cached clock: a sliding
//	                                  window gives back only as a second ticks
//	Config.BareRefusals               refusals carry Retry-After alone
//	Config.RetryAfterEvery            Retry-After on every answer, to the millisecond
//	Config.NoPolicy                   IETF without RateLimit-Policy: no stated window
//	Algorithm GCRA, Quota.Burst       the reset is "until full"; limit is the burst
//	Algorithm LeakyBucket             nginx limit_req: excess delayed or refused
//	Algorithm SlidingLog              each request back a Window after it, one by
//	                                  one; the reset moves on with every request,
//	                                  or is a record's with AlignFirstRequest
//	Dialect DateReset                 dates in formats http.ParseTime does not read
//	Config.Jitter, Config.Seed        answers in another order than sent
//
// Some servers as configured here, with the headers they send (the names of
// the nearest dialect may differ):
//
//	go-chi/httprate   SlidingWindow, AlignClock, RoundEstimate, Truncate,
//	                  RetryAfterWindow; X-RateLimit-Reset in Unix seconds
//	                  (GitHub dialect)
//	ulule/limiter     FixedWindow, AlignFirstRequest, Truncate;
//	                  X-RateLimit-Reset in Unix seconds (GitHub dialect)
//	throttled v2      GCRA with Burst = MaxBurst+1; resets and Retry-After
//	                  in delta seconds, rounded up (IETF dialect)
//	gofiber limiter   SlidingWindow, AlignFirstRequest, CountRefused,
//	(sliding)         ClockTick 1 s, BareRefusals; IETF dialect with NoPolicy
//	nginx limit_req   LeakyBucket with Burst = burst+1 (NoDelay for
//	                  nodelay), None dialect, RefuseStatus 503 by default
//	Flask-Limiter     SlidingLog, NextSecond, RetryAfterWindow;
//	(moving window)   X-RateLimit-Reset in Unix seconds (GitHub dialect,
//	                  though Flask-Limiter sends Retry-After on refusals)
//	NestJS throttler  SlidingLog, AlignFirstRequest (its reset is a
//	                  record's), Block = Window, BareRefusals; IETF dialect
//	                  with NoPolicy
//	Django REST       SlidingLog, RetryAfterOnly: Retry-After on refusals,
//	framework         rounded up, and no quota headers
//	rate-limiter-     FixedWindow, AlignFirstRequest, RetryAfterEvery;
//	flexible (as its  X-RateLimit-Reset in Unix seconds rounded up
//	README sends)     (GitHub dialect)
//
// # Virtual time
//
// Inside a testing/synctest bubble, create the Handler in the bubble and use
// it as the client's transport; time.Sleep or a waiting client advances the
// virtual clock, and every header value is exact. With Config.Jitter,
// requests that arrive in the same order are answered in the same shuffled
// order on every run:
//
//	synctest.Test(t, func(t *testing.T) {
//		h := throttletest.NewHandler(throttletest.Config{})
//		client := &http.Client{Transport: h}
//		// ... drive the client; assert on responses and h.Stats().
//	})
package throttletest
