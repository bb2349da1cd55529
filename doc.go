// Package throttle keeps a client inside a server's rate limit.
//
// One [Bucket] per quota is the choke point for every goroutine, client and
// (through a [Store]) process that spends it. It is a token bucket with a
// bounded first-in first-out wait queue, and it is corrected after every
// response by what the server's rate-limit headers say: the local arithmetic
// is an estimate, the server's headers are the truth. [Transport] puts a
// bucket per host behind an [http.RoundTripper]; SDKs whose transport is not
// net/http drive a Bucket directly.
//
// # The bucket
//
// A Bucket holds up to Burst tokens, refilled at Limit tokens per second
// ([Config]); a request takes one, [Bucket.AllowN] and [Bucket.WaitN] take n.
// Tokens are fractional and are derived from the monotonic time elapsed since
// the last change (GCRA: the bucket is the instant at which it will be full
// again), so a bucket runs no ticker, and no timer or goroutine while nobody
// waits. In the common case (nobody waiting, no cooldown or server budget in
// force, no Store) [Bucket.Allow] is one compare-and-swap, without a lock. A
// zero Burst is one second's worth of Limit, rounded up, at least 1.
//
// # The queue
//
// [Bucket.Wait] queues the callers it cannot admit at once, by [Priority]
// ([WithPriority], [Transport.Priority]; three levels) and first in, first
// out within a priority: a WaitN for many tokens at the head of its priority
// is not overtaken by smaller ones behind it, and Allow never jumps the
// queue. Waiting raises a caller's priority a level per [Config.Aging], so
// that a stream of higher priority callers delays it by a bounded time.
// Each caller sleeps on its own goroutine; only the head has a timer.
// Admission is decided up front: a full queue ([Config.MaxQueue], default
// [DefaultMaxQueue]) fails with [ErrQueueFull], unless the caller would be
// served before the last waiter, which then fails with ErrQueueFull in its
// place; a predicted wait beyond [Config.MaxWait] (default
// [DefaultMaxWait]) or the context's deadline fails with [ErrWaitTooLong]
// (which also matches [context.DeadlineExceeded] when the deadline is the
// reason), and n beyond the burst with [ErrExceedsBurst]. Nobody sits in the
// queue only to time out. A cancelled caller leaves the queue at once and
// gives back any tokens set aside for it. When the bucket changes under the
// queue (a new rate, a correction, a cooldown, a caller of higher priority
// put ahead) the waiters are re-planned, and those that can no longer be
// served in time fail at once.
//
// # Adaptation
//
// [Bucket.Observe] folds a response into the bucket; [Bucket.Begin] and
// [Flight.Done] do the same while counting the request as in flight, so that
// a Remaining the server sent before it saw the request is read correctly.
// [ParseHeaders] reads the headers into a [Quota] (its documentation lists
// the dialects it reads, in their order); [Bucket.ObserveQuota] and
// [Flight.DoneQuota] take a Quota built by hand, for protocols that are not
// HTTP.
//
//   - Until a server is shown to be a fixed window, the bucket paces at 95%
//     of its steady rate (limit over window) with a small burst, which is
//     safe on every algorithm; a fixed window's quota is then spent before
//     the window's earliest end (where its resets leave no time before
//     that end, over half the time to its cap's end, at the steady rate at
//     least, so that other clients on the quota find room).
//   - Remaining is a cap: the request numbered s that was told r left means
//     nothing numbered beyond s + r goes out before the window ends. An
//     answer to a request admitted after the cap's own answer arrived
//     replaces it; others only lower it; an answer from an older window is
//     ignored.
//   - A reset is an interval (whole seconds may be truncated or rounded up):
//     a spent cap holds to its latest end, and one probe then sizes the next
//     window. A delay in whole seconds on a window of a second, or on one
//     shown to be a fixed window, for a client alone on it, is taken as
//     rounded up (as express-rate-limit, fastify and NestJS send it) until a
//     probe at it finds the window still open. A delay of 0 s from a server
//     that sends delays, followed by a request counted in the same window,
//     shows the delays truncated: each window may end up to a second after
//     its resets, and a window read from them up to a second short. Two
//     windows' whole-second resets that are instants jump by no less than a
//     window of whole seconds: a window read a second longer is that jump,
//     one that a window outlasted is at least it, and where every reset had
//     passed on arrival it is the window. A 2xx's Retry-After to the
//     millisecond within that interval (rate-limiter-flexible's documented
//     headers) places the end. Servers shown to refill continuously (sliding
//     windows, token buckets, GCRA) get a cap that grows at 95% of their
//     steady rate instead; a sliding window's at what its last window
//     counted, from its whole-second clock's next tick where its resets are
//     whole seconds. A reset that moves on with the clock may be a sliding
//     log's: until it refills faster than a log of this client's requests
//     would, it is paced at no less than its steady rate, its window placed
//     by what it gave back. One read as GCRA's "seconds until full" whose
//     reset stays a window ahead while far more is left (a log's "when it
//     will be empty") is a log again, for a client alone. A window born short
//     of its limit, by more than others and answers out of order could
//     explain, is a sliding window's once eight were counted to tell the
//     share by (on a limit under eight, once the share has been seen).
//     When Remaining falls faster than this client spends, other clients
//     share the quota, and it takes only its share; until the answers have
//     shown that share, its requests go one at a time. Where no reset says
//     when a spent window comes back, it probes it 1/share as far apart as a
//     client alone would, and so do its backoffs after a 429.
//   - With [Config.Limit] zero the rate is learned: before the first answer
//     one request goes out alone and the others wait for what it teaches.
//     Where that answer shows others' requests counted before it (Remaining
//     under Limit − 1) and gives a steady rate, the next goes an interval of
//     it after the first, not at once.
//     A configured Limit is a ceiling the server can lower but never raise.
//   - [Config.Pace] chooses how a window's quota is spent: [PaceEven] (the
//     default) spreads what is left over the time left, [PaceBurst] spends it
//     at once and then waits for the reset.
//   - A 429, a 503 with Retry-After, or GitHub's 403 with no quota left puts
//     every caller of the bucket into a cooldown until the Retry-After, else
//     the reset, else (the first hold of a server that sends no quota
//     headers) just after the next of the lengths windows are given, counted
//     from the first request (1, 2, 3, 4, 5, 10 s … an hour), and later to
//     the ends of a window of the length found, else an exponential backoff
//     with jitter; every such wait is
//     capped by [Config.MaxCooldown] (default [DefaultMaxCooldown]), pacing
//     included. After a cooldown one request goes alone and the others wait
//     for its answer.
//   - A server that sends no quota headers at all is probed: one request at
//     a time until its first 429 (or 64 answers, and then from the rate
//     they were served at, doubling), then a 429 cuts the rate
//     multiplicatively and successes grow it back along a cubic curve, as
//     TCP CUBIC does. A first hold that the server timed (Retry-After)
//     measures its rate, kept at 95% for a while before the curve climbs
//     past it; told the Limit and refused at it, the rate stays at 95% of
//     it.
//
// # The transport
//
// A [Transport] keys each request ([Transport.Key]; the host by default, ""
// for not throttled), waits in that key's bucket with the request's context,
// sends it through Base and observes the response. When the server names
// the scope a response counts against (GitHub's X-RateLimit-Resource,
// Discord's X-RateLimit-Bucket) that scope gets a bucket of its own. A
// refusal is a [*RefusedError] that matches [ErrQueueFull] or
// [ErrWaitTooLong] under [errors.Is]; every response obtained, 429 included,
// is returned with a nil error. Retrying is opt-in ([Transport.Retries]).
// Idle buckets are dropped after [Transport.IdleTimeout]. [Transport.Stats]
// and [Bucket.Stats] report what happened; [Config.OnEvent] and
// [Config.Logger] report long waits, refusals, cooldowns and changes of rate
// as they happen; [Config.Trace] tells telemetry of each queued caller's wait
// and each answer with the request's context (package otelthrottle wires it
// and the stats to OpenTelemetry). Nothing is logged by default.
//
// # Costs, token quotas and SDKs that retry
//
// A request may cost more than one token, in the unit the server counts: an
// LLM call's prompt and max_tokens. [WithCost] gives the cost in the
// context, which passes through SDKs that build the request themselves;
// [Transport.Cost] computes it from the request; [Bucket.BeginN] takes it
// directly. [Transport.Unit] names the quota the buckets count ("tokens",
// "input-tokens", ...), so that its headers, not the request quota's,
// correct them. When the actual cost is known (the usage in the answer),
// [Settle] (or [Flight.Settle]) gives back what was taken beyond it or
// takes the rest. [Transport.Meters] counts each request against further
// quotas as well (requests beside tokens, a daily quota beside a per-minute
// one): a request goes out when all of them can take its cost at once, and
// none holds tokens while it waits on another. [Config.MaxInFlight] bounds
// the requests in flight at once, in the same queue; a server's IETF
// concurrency quota lowers it. SDKs with retry loops of their own take a
// refusal error for a connection error and retry it; with [Refuse429] the
// Transport answers a refusal with a synthetic 429 that tells them not to.
//
// # Restarts and processes
//
// [Bucket.Snapshot] and [Bucket.Restore] carry a bucket across a restart
// without a fresh burst and without forgetting a cooldown; [PersistFile] keeps
// the state in a file. With [Config.Store] (package redisstore implements
// [Store] on Redis), processes sharing one quota share one bucket: each keeps
// its own queue, a 429 seen by one cools them all down, and a store outage
// degrades to local limiting at [Config.StoreShare] of the rate.
//
// # Quick start
//
// Share one Transport among every client that calls the API:
//
//	client := &http.Client{Transport: &throttle.Transport{}}
//	resp, err := client.Get("https://api.github.com/rate_limit")
//	if errors.Is(err, throttle.ErrWaitTooLong) {
//		// refused without being sent: the quota will not allow it in time
//	}
//
// Or drive a bucket directly:
//
//	b := throttle.NewBucket(throttle.Config{}) // learn the quota from the server
//	f, err := b.Begin(ctx)
//	if err != nil {
//		return err
//	}
//	resp, err := call(ctx)
//	f.Done(resp) // nil when no response came
//
// Package throttletest is a fake rate-limited API for testing clients.
package throttle
