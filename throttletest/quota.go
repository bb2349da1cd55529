package throttletest

import (
	"fmt"
	"time"
)

// Algorithm is how a [Quota] counts requests.
type Algorithm int

const (
	// FixedWindow counts requests in windows of Quota.Window (placed by
	// Quota.Align). A window admits Limit requests; its count drops to zero
	// when the next window begins. The reset time is the end of the current
	// window.
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
	// can be refused again. With windows that are not contiguous
	// (AlignFirstRequest), the previous window weighs by the share of it the
	// last Window still covers.
	SlidingWindow

	// TokenBucket holds up to Burst tokens (Limit by default) and refills
	// Limit tokens per Window, continuously; a request takes one token. It
	// starts full. It states Limit as its limit (with Burst above Limit,
	// Remaining can exceed it); Remaining is the whole tokens left; the
	// reset time is when the bucket will be full again, and
	// Retry-After (when a dialect sends it) is when the next token arrives.
	TokenBucket

	// GCRA is the generic cell rate algorithm of throttled/throttled v2 and
	// redis-cell: the arithmetic of TokenBucket (capacity Burst, Limit per
	// Window), stated as those libraries state it. The limit sent is the
	// capacity, Burst, not Limit; the reset is the time until the bucket is
	// full ("seconds until full", not the end of a window), and Retry-After
	// is the time until the next request would be admitted. A client can
	// learn the rate only as (limit − remaining) ÷ reset.
	GCRA

	// LeakyBucket is nginx's limit_req: a bucket that leaks Limit requests
	// per Window and holds Burst of them (Limit by default). A request that
	// would overflow it is refused and not counted; the limit sent is Burst.
	// Without Quota.NoDelay, as nginx by default, an admitted request that
	// finds others ahead of it in the bucket is answered only once they
	// have leaked out: after (requests ahead) × Window/Limit. With NoDelay
	// it is answered at once. The reset is when the bucket is empty, and
	// Retry-After is when a request would fit again.
	//
	// The nginx configuration
	//
	//	limit_req_zone $key zone=z:1m rate=5r/s;
	//	limit_req zone=z burst=B nodelay;
	//	limit_req_status 429;
	//
	// is Quota{Limit: 5, Window: time.Second, Algorithm: LeakyBucket,
	// Burst: B + 1, NoDelay: true} with the None dialect: nginx sends no
	// rate-limit headers, and its refusal is a bare status (503 unless
	// limit_req_status says otherwise; set Config.RefuseStatus for 503).
	// nginx counts in milliseconds; the Handler counts exactly.
	LeakyBucket

	// SlidingLog logs the time of every request it admits (and, with
	// Quota.CountRefused, of every request it refuses) and admits one while
	// fewer than Limit were logged in the last Window, as Flask-Limiter's
	// moving window, Django REST framework's throttles and Redis
	// sorted-set limiters do. A request comes back to the quota exactly a
	// Window after it was logged, one by one, not at a window's turn.
	// Remaining is Limit less what the last Window logged; the reset is
	// when the log will be empty, a Window after its newest request (a
	// Window from now when it is empty), so it moves on with every request,
	// as Flask-Limiter states it; Retry-After is when the oldest request
	// that keeps the log full leaves it.
	SlidingLog
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
	case GCRA:
		return "GCRA"
	case LeakyBucket:
		return "LeakyBucket"
	case SlidingLog:
		return "SlidingLog"
	}
	return fmt.Sprintf("Algorithm(%d)", int(a))
}

// windowed reports whether a counts in windows.
func (a Algorithm) windowed() bool { return a == FixedWindow || a == SlidingWindow }

// bucket reports whether a is one of the buckets, which have a burst.
func (a Algorithm) bucket() bool { return a == TokenBucket || a == GCRA || a == LeakyBucket }

// Alignment is where the windows of a FixedWindow or SlidingWindow [Quota]
// begin.
type Alignment int

const (
	// AlignStart makes windows contiguous from the handler's start (the call
	// to NewHandler), their boundaries shifted by Config.Phase.
	AlignStart Alignment = iota

	// AlignClock makes windows contiguous and aligned to the server's clock
	// (the real time plus Config.DateSkew), as time.Time.Truncate(Window)
	// aligns them for go-chi/httprate: a 1-minute window begins on the
	// minute. Config.Phase shifts them too. In a testing/synctest bubble,
	// whose clock starts at midnight, this is AlignStart for any window that
	// divides a day.
	AlignClock

	// AlignFirstRequest starts a window at the first request after the
	// previous window ended, as ulule/limiter and Redis INCR+EXPIRE limiters
	// do: windows are not contiguous, and the reset is Window after the
	// request that opened the current one, whenever that came. A SlidingLog
	// with it states such a window's end as its reset, a record's that
	// gates nothing, as NestJS's throttler does: the log still counts each
	// request for a Window after it.
	AlignFirstRequest
)

// String returns the alignment's Go name, such as "AlignStart".
func (a Alignment) String() string {
	switch a {
	case AlignStart:
		return "AlignStart"
	case AlignClock:
		return "AlignClock"
	case AlignFirstRequest:
		return "AlignFirstRequest"
	}
	return fmt.Sprintf("Alignment(%d)", int(a))
}

// Quota is the limit one resource enforces: Limit requests per Window,
// counted by Algorithm.
//
// The zero Quota is DefaultLimit (10) requests per DefaultWindow (1s) in
// fixed windows aligned to the handler's start, refused requests not
// counted.
type Quota struct {
	// Limit is the number of requests allowed per Window. Zero or negative:
	// DefaultLimit. Above MaxLimit: MaxLimit.
	Limit int
	// Window is the length of the quota's window (and, for the bucket
	// algorithms, the time to refill Limit requests). Zero or negative:
	// DefaultWindow. Dialects that state the window in seconds round it up
	// to a whole second.
	Window time.Duration
	// Algorithm is how requests are counted. Zero: FixedWindow.
	Algorithm Algorithm

	// Burst is the capacity of TokenBucket, GCRA and LeakyBucket: the
	// requests an idle bucket admits at once. Zero or negative: Limit. Above
	// MaxLimit: MaxLimit. Windows and logs have no burst: a positive Burst
	// with FixedWindow, SlidingWindow or SlidingLog makes NewHandler panic.
	Burst int

	// Align is where the windows of FixedWindow and SlidingWindow begin.
	// Zero: AlignStart. Buckets and logs have no windows: another Align
	// with them makes NewHandler panic, but AlignFirstRequest with
	// SlidingLog, whose reset is then a record's (see AlignFirstRequest).
	Align Alignment

	// CountRefused makes the requests a SlidingWindow or SlidingLog refuses
	// count against the quota as well, as limiters that increment before
	// they compare do (Redis INCR, then a check) and as sliding logs that
	// log every request (ZADD, then ZCOUNT). The refusals weigh in the next
	// window's estimate, or stay in the log for a Window, so a client that
	// keeps sending while refused, even at the quota's own rate, stays
	// refused until it pauses long enough for them to age out. With other
	// algorithms it makes NewHandler panic: a full FixedWindow refuses
	// everything until it ends whether or not it counts the refusals, and
	// the buckets here, as throttled's and nginx's, never count one.
	CountRefused bool

	// RoundEstimate rounds a SlidingWindow's estimate to the nearest
	// request (halves up) instead of down, as go-chi/httprate rounds it:
	// just after a window's turn, while the old window's count weighs more
	// than the limit less a half, a request is refused although the window
	// has begun to give its quota back (30 per 3 s: for 50 ms). With other
	// algorithms it makes NewHandler panic.
	RoundEstimate bool

	// NoDelay is nginx's nodelay for LeakyBucket: requests within the burst
	// are answered at once instead of when the bucket has leaked down to
	// them. Another Algorithm with NoDelay makes NewHandler panic.
	NoDelay bool

	// Block makes a refusal block the quota for Block from then, whatever
	// it counts: every request until the block ends is refused, told 0
	// left and, in the dialects that send Retry-After, to retry when the
	// block ends, and is not counted; then the quota starts over, its
	// count, log or bucket empty. NestJS's throttler blocks so for its
	// blockDuration, a Window by default; Cloudflare's and AWS WAF's rate
	// rules block for a mitigation period. With any Algorithm. Zero or
	// negative: no block.
	Block time.Duration
}

// normalize returns q with its zero and out-of-range fields replaced by the
// documented defaults (Burst stays zero when it means Limit). It panics on
// an unknown Algorithm or Alignment and on options the algorithm does not
// have: those are mistakes in the test, not server behaviours.
func (q Quota) normalize() Quota {
	q.Limit = min(q.Limit, MaxLimit)
	if q.Limit <= 0 {
		q.Limit = DefaultLimit
	}
	q.Burst = min(max(q.Burst, 0), MaxLimit)
	q.Block = max(q.Block, 0)
	if q.Window <= 0 {
		q.Window = DefaultWindow
	}
	switch q.Algorithm {
	case FixedWindow, SlidingWindow, TokenBucket, GCRA, LeakyBucket, SlidingLog:
	default:
		panic(fmt.Sprintf("throttletest: unknown %v", q.Algorithm))
	}
	if q.Align < AlignStart || q.Align > AlignFirstRequest {
		panic(fmt.Sprintf("throttletest: unknown %v", q.Align))
	}
	switch {
	case !q.Algorithm.bucket() && q.Burst > 0:
		panic(fmt.Sprintf("throttletest: Quota.Burst with %v, which has no burst", q.Algorithm))
	case !q.Algorithm.windowed() && q.Align != AlignStart && (q.Algorithm != SlidingLog || q.Align != AlignFirstRequest):
		panic(fmt.Sprintf("throttletest: Quota.Align with %v, which has no windows", q.Algorithm))
	case q.CountRefused && q.Algorithm != SlidingWindow && q.Algorithm != SlidingLog:
		panic(fmt.Sprintf("throttletest: Quota.CountRefused with %v, whose answers it would not change", q.Algorithm))
	case q.RoundEstimate && q.Algorithm != SlidingWindow:
		panic(fmt.Sprintf("throttletest: Quota.RoundEstimate with %v, which has no estimate", q.Algorithm))
	case q.NoDelay && q.Algorithm != LeakyBucket:
		panic(fmt.Sprintf("throttletest: Quota.NoDelay with %v, which never delays", q.Algorithm))
	}
	return q
}
