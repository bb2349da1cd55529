package throttle

import (
	"context"
	"math"
	"math/rand/v2"
	"net/http"
	"time"

	"golang.org/x/time/rate"
)

// Pace is how a bucket spends the quota a server reports; see [Config.Pace].
type Pace int

const (
	// PaceEven spreads the requests left in the server's window over the
	// time left in it, so that callers never burst the quota and then stall
	// until the reset. Against servers whose quota refills continuously
	// (sliding windows, token buckets) it paces at 95% of the server's
	// steady rate, which keeps them from running dry.
	PaceEven Pace = iota
	// PaceBurst lets callers spend what is left in the window at once (up to
	// the server's limit), then holds them until the window resets.
	PaceBurst
)

// Tuning of the adaptation, in one place.
const (
	// sameWindow is how far apart two resets may be and still name the same
	// window: servers round resets to whole seconds.
	sameWindow = float64(time.Second)
	// coarseWindow: windows shorter than this are paced at the steady rate
	// rather than by spreading, since whole-second resets cannot place them.
	coarseWindow = 4 * sameWindow
	// minHorizon is the shortest time PaceEven spreads requests over.
	minHorizon = float64(100 * time.Millisecond)
	// refillShare is the share of a refilling server's steady rate PaceEven
	// uses, so that its remaining count stays above zero.
	refillShare = 0.95
	// decrease is the factor a 429 from a server that sends no quota headers
	// applies to the rate. The rate then grows back along a cubic curve (as
	// TCP CUBIC does): fast at first, flat near the rate that drew the 429,
	// then probing beyond it, reaching it again after cubicRequests requests'
	// worth of time.
	decrease      = 0.7
	cubicRequests = 150
	// backoffBase is the first backoff after a 429 that says nothing of when
	// to come back, in intervals of the (reduced) rate, at least minBackoff.
	backoffBase = 2
	minBackoff  = float64(100 * time.Millisecond)
	// minProbeRate is the least rate probing assumes a server allows: one
	// request a minute.
	minProbeRate = 1.0 / 60
)

// adapt is the part of a Bucket's state that comes from the server. Its
// fields are guarded by Bucket.mu.
type adapt struct {
	pace        Pace
	maxCooldown float64 // nanoseconds

	learning bool // no answer yet: probe one request at a time
	probing  int  // requests admitted while learning, not yet answered

	window float64 // end of the server's current window (bucket clock); 0: unknown
	// budget is what the server has left in its window, less what this
	// bucket has admitted since it said so; nothing beyond it is admitted
	// before budgetEnd, the window's end. A rate alone cannot promise that:
	// corrections arrive late. budgetEnd 0: no budget.
	budget       float64
	budgetEnd    float64
	budgetSent   float64 // when the request whose answer set budget was sent
	winLen       float64 // the server's window length in ns; 0: unknown
	statedWindow bool    // winLen was stated by the server, not inferred
	srvLimit     float64 // the server's limit per window; <= 0: unknown
	refills      bool    // the server's remaining count refills within a window
	seen         float64 // remaining last reported for the current window
	seenSent     float64 // when the request that reported seen was sent

	aimd     bool     // the rate is being found by probing: the server sends no quota
	rmax     float64  // the rate that drew the last 429, tokens per second
	backoffs int      // cooldowns in a row that the server gave no end for
	cutOpen  bool     // cut since the last success: another 429 backs off but does not cut
	cut      float64  // when the rate was last cut or set free; a 429 for a request sent before it is of the same episode
	served   uint64   // responses that were not refusals
	cutCount uint64   // served when cut was set
	cutSent  uint64   // admitted (Bucket.count) when cut was set
	holdFrom float64  // when the current hold began; holds are capped from there
	probe    bool     // a hold ended: the first admission after it goes alone
	jitter   rand.PCG // seeded from the bucket's creation time: processes differ, tests repeat
}

// A Flight is a request admitted by [Bucket.Begin] and not yet answered. The
// bucket counts it as in flight, so that the server's Remaining, which does
// not know of it yet, is read correctly. Call [Flight.Done] exactly once with
// the response, or with nil when no response came.
type Flight struct {
	b    *Bucket
	sent float64
}

// Begin waits for a token as [Bucket.Wait] does and records the request as in
// flight until [Flight.Done]. Use it around each request when the bucket is
// driven directly (an SDK whose transport is not net/http): it keeps the
// bucket exact about requests the server has not answered yet.
func (b *Bucket) Begin(ctx context.Context) (Flight, error) { return b.beginAt(ctx, b.now()) }

// beginAt is Begin with a reading of the bucket's clock taken just before.
func (b *Bucket) beginAt(ctx context.Context, now float64) (Flight, error) {
	sent, err := b.waitAt(ctx, 1, now)
	if err != nil {
		return Flight{}, err
	}
	b.inflight.Add(1)
	return Flight{b, sent}, nil
}

// Done ends the flight with its response, which it observes as
// [Bucket.Observe] does. resp nil means that no response came (a transport
// error or a cancelled request): the request leaves the in-flight count and,
// if it was the bucket's probe for an unknown quota, another caller probes.
// Done does not read or close the body.
func (f Flight) Done(resp *http.Response) {
	if resp == nil {
		f.DoneQuota(0, Quota{})
		return
	}
	if f.b == nil {
		return
	}
	arrived := time.Now()
	f.doneAt(resp.StatusCode, ParseHeaders(resp.Header, arrived), f.b.at(arrived))
}

// DoneQuota is [Flight.Done] for callers that parse the response themselves:
// status is the HTTP status (0: no response) and q what the server said. Set
// Limit and Remaining to -1 when the server did not state them: the zero
// Quota says that the quota is spent.
func (f Flight) DoneQuota(status int, q Quota) {
	if f.b == nil {
		return
	}
	f.b.observe(status, q, f.sent, true, f.b.now())
}

// doneAt is DoneQuota for an answer that arrived at now, on the bucket's
// clock.
func (f Flight) doneAt(status int, q Quota, now float64) {
	if f.b == nil {
		return
	}
	f.b.observe(status, q, f.sent, true, now)
}

// Observe folds a response into the bucket: its rate-limit headers (read by
// [ParseHeaders]) lower the tokens to what the server allows, teach the rate
// when [Config.Limit] is zero, and a 429 (or a 503 with Retry-After, or
// GitHub's 403 with no quota left) holds every caller of the bucket until the
// server's Retry-After, else its reset, else a backoff with jitter, capped by
// [Config.MaxCooldown]. Callers queued in Wait are re-planned. Observe reads
// only the status and headers; resp nil is ignored.
//
// Responses that belong to a window older than one already seen never raise
// the tokens; only a response from a newer window does.
func (b *Bucket) Observe(resp *http.Response) {
	if resp == nil {
		return
	}
	arrived := time.Now()
	b.observe(resp.StatusCode, ParseHeaders(resp.Header, arrived), math.NaN(), false, b.at(arrived))
}

// ObserveQuota is [Bucket.Observe] for callers that parse the response
// themselves: status is the HTTP status and q what the server said (-1 for
// counts not stated, as in [Flight.DoneQuota]).
func (b *Bucket) ObserveQuota(status int, q Quota) {
	b.observe(status, q, math.NaN(), false, b.now())
}

// observe folds one answer, which arrived at now, into the bucket. sent is
// when the request was admitted (NaN: not known); flight says whether it was
// counted in flight.
func (b *Bucket) observe(status int, q Quota, sent float64, flight bool, now float64) {
	defer b.emit()
	b.mu.Lock()
	now = b.ownAt(now)
	if flight {
		for v := b.inflight.Load(); v > 0 && !b.inflight.CompareAndSwap(v, v-1); v = b.inflight.Load() {
		} // never below zero, even if a Flight is Done twice
	}
	if math.IsNaN(sent) {
		sent = now
	}
	if status == 0 { // no response: nothing was learned
		if b.learning {
			b.probing = max(b.probing-1, 0)
		}
	} else {
		b.learn(now, sent, status, q)
	}
	b.replan(now)
	b.release(now)
	b.mu.Unlock()
	if b.store != nil {
		b.sendCorrection()
	}
}

// limited reports whether a response says that the client is over its quota.
func limited(status int, q Quota) bool {
	switch status {
	case http.StatusTooManyRequests:
		return true
	case http.StatusServiceUnavailable:
		return q.RetryAfter > 0
	case http.StatusForbidden: // GitHub: primary and secondary rate limits
		return q.RetryAfter > 0 || q.Remaining == 0
	}
	return false
}

// learn applies one answer. It requires that b.mu is held and the state owned.
func (b *Bucket) learn(now, sent float64, status int, q Quota) {
	quota := q.Remaining >= 0 || q.Limit >= 0
	wasLearning := b.learning
	b.learning, b.probing = false, 0
	if wasLearning && !quota && b.ceiling == 0 {
		// The server sends no quota: run unthrottled until a 429. The
		// episode starts with the probe, so that a 429 to it counts.
		b.free(now, sent)
	}
	if q.Limit > 0 {
		b.srvLimit = q.Limit
	}
	if q.Window > 0 {
		b.winLen, b.statedWindow = float64(q.Window), true
	}
	reset := 0.0
	if !q.Reset.IsZero() {
		reset = max(b.at(q.Reset), now)
	}
	// Retry-After takes precedence over the reset for when to come back.
	until := reset
	if q.RetryAfter > 0 && limited(status, q) {
		until = 0
	}
	current := q.Remaining < 0 || b.correct(now, sent, q.Remaining, reset, until)
	if limited(status, q) {
		b.cooldown(now, sent, q, reset, quota) // whatever window it names
		return
	}
	if !current {
		return // from an older window: it says nothing about this one
	}
	if status < 400 {
		b.served++
		b.backoffs, b.cutOpen = 0, false
		if b.aimd {
			b.setLimit(now, b.cubic(now))
		}
	}
}

// correct applies the server's remaining count and window end (reset, 0 if
// unknown) and retunes the rate; when the quota is spent it holds callers
// until (0: not at all). It reports false for an answer from an older window,
// which it ignores. It requires that b.mu is held and the state owned.
func (b *Bucket) correct(now, sent, remaining, reset, until float64) bool {
	left := remaining - float64(b.inflight.Load())
	raise := false
	switch {
	case reset == 0: // no window: only ever lower
	case b.window == 0 || reset > b.window+b.tolerance(): // a new window
		if jump := reset - b.window; b.window != 0 && b.srvLimit > 0 && !b.statedWindow && jump >= coarseWindow {
			// Learn the window from the resets' cadence: the smallest jump
			// seen (skipped windows make larger ones). Below a few seconds
			// the whole-second resets cannot tell.
			if b.winLen == 0 || jump < b.winLen {
				b.winLen = jump
			}
		}
		if b.window != 0 && b.srvLimit > 0 && remaining < b.srvLimit/2 {
			// A fresh fixed window would have most of its quota: this
			// server counts requests across windows (a sliding window).
			b.refills = true
		}
		b.window, b.seen, b.seenSent = reset, remaining, sent
		raise = true
	case reset < b.window-b.tolerance():
		if sent <= b.seenSent {
			return false // an answer to an earlier request, from an older window
		}
		// A newer request names an earlier reset: the window seen before
		// was not this quota's (or the header lied). Follow the newer one,
		// but raise nothing on its word.
		b.window, b.seen, b.seenSent = reset, remaining, sent
	default: // the same window
		if sent > b.seenSent && remaining > b.seen+0.5 {
			b.refills = true // more left than before, for a later request
		}
		if sent >= b.seenSent {
			b.seen, b.seenSent = remaining, sent
		}
	}
	if b.store == nil && !b.refills && !b.coarse() && until > now {
		// The store is the budget of a shared bucket. Every answer gives
		// a safe bound (remaining less all in flight,
		// some of which the server may have counted already): the answer
		// to the latest request replaces the budget, older ones only lower
		// it.
		if raise || b.budgetEnd <= now || sent > b.budgetSent {
			b.budget, b.budgetSent = left, sent
		} else {
			b.budget = min(b.budget, left)
		}
		b.budgetEnd = min(until, now+b.maxCooldown)
	}
	b.retune(now, left, reset)
	if tokens := b.tokensAt(now); raise || left < tokens {
		b.stats.corrections++
		b.stats.drift = tokens - left
		b.setTokens(now, min(left, float64(b.burst)))
		if b.store != nil {
			// Only lower the shared tokens: this process's count of what
			// is in flight leaves out the others', so a raise could
			// overshoot; the rate refills the store.
			b.corr.SetTokens, b.corr.Tokens, b.corrReady = true, left, true
		}
	}
	if left <= 0 && until > now && !b.refills {
		b.holdUntil(now, until) // spent: nothing more until the reset
	}
	return true
}

// coarse reports whether the server's windows are too short to be placed by
// whole-second resets. It requires that b.mu is held.
func (b *Bucket) coarse() bool { return b.winLen > 0 && b.winLen < coarseWindow }

// tolerance is how far apart two resets may be and still name the same
// window. It requires that b.mu is held.
func (b *Bucket) tolerance() float64 {
	if b.winLen > 0 {
		return min(sameWindow, b.winLen/2)
	}
	return sameWindow
}

// retune sets the rate from what the server said. It requires that b.mu is
// held and the state owned.
func (b *Bucket) retune(now, left, reset float64) {
	if b.aimd {
		b.aimd = false // the server does send quota headers after all
	}
	steady := 0.0 // tokens per second
	if b.srvLimit > 0 && b.winLen > 0 {
		steady = b.srvLimit / (b.winLen / float64(time.Second))
	}
	r := 0.0
	switch {
	case b.pace == PaceBurst:
		r = steady
		if burst := int(min(math.Ceil(b.srvLimit), math.MaxInt32)); b.srvLimit > 0 && b.burst != burst {
			b.auto = false
			b.setParams(now, b.limit, burst) // republishes the capacity
		}
	case (b.refills || b.coarse()) && steady > 0:
		// Servers that refill continuously, and windows too short to be
		// placed by whole-second resets: pace just under the steady rate.
		r = steady * refillShare
	case left > 0 && reset > now:
		// Aim to finish a rounding step before the reset: servers round
		// it up to the second, and the window really ends before it.
		horizon := max(reset-now-sameWindow, minHorizon)
		r = left / (horizon / float64(time.Second))
	default:
		r = steady
	}
	if r <= 0 {
		if b.limit == rate.Inf && b.ceiling == 0 && left > 0 {
			return // nothing to learn a rate from yet
		}
		if r = float64(b.limit); b.limit == rate.Inf {
			// Spent, with no window to spread over: a token per second
			// until the server says more.
			r = 1
		}
	}
	b.setLimit(now, rate.Limit(r))
}

// setLimit sets the rate, bounded by the configured ceiling, keeping the
// tokens. It requires that b.mu is held and the state owned.
func (b *Bucket) setLimit(now float64, r rate.Limit) {
	if r = normLimit(r); r == 0 {
		return
	}
	if b.ceiling > 0 {
		r = min(r, b.ceiling)
	}
	if r != b.limit {
		b.setParams(now, r, b.burst)
	}
}

// free lets the bucket run unthrottled from the request sent at from,
// measuring its rate in case a 429 asks for a cut. It requires that b.mu is held and the state owned.
func (b *Bucket) free(now, from float64) {
	b.setParams(now, rate.Inf, b.burst)
	b.cut, b.cutCount, b.cutSent = min(from, now), b.served, b.count()
}

// cooldown holds every caller after the server said the client is over its
// quota. It requires that b.mu is held and the state owned.
func (b *Bucket) cooldown(now, sent float64, q Quota, reset float64, quota bool) {
	// A 429 for a request sent before the last one's cut is of the same
	// episode: it may lengthen the hold in force, but it does not start
	// another, cut or back off again.
	episode := sent >= b.cut
	if !episode && now >= b.hold && q.RetryAfter <= 0 {
		return // an answer sent before the episode's cooldown, arriving after it
	}
	if !quota && episode && !b.cutOpen && b.ceiling != rate.Inf {
		b.cutOpen = true
		// No quota headers: find the server's rate by probing. The rate
		// that drew the 429 overstates the server's when it allows bursts
		// (a fixed window spent early); what it served since the last cut,
		// holds included, understates it by the ramp up. Take a
		// little over the second, bounded by the first, and let one
		// episode cut at most 20% more than the decrease.
		// From unthrottled, the answers to the first burst arrive together,
		// so count what was sent instead, over at least a second.
		elapsed := (now - b.cut) / float64(time.Second)
		var r float64
		if b.limit == rate.Inf {
			r = 1.25 * float64(b.count()-b.cutSent) / max(elapsed, 1)
		} else {
			r = 1.25 * float64(b.served-b.cutCount) / max(elapsed, 0.1)
			r = min(max(r, float64(b.limit)*0.8), float64(b.limit))
		}
		r = max(r, minProbeRate)
		b.aimd, b.rmax = true, r
		b.setLimit(now, rate.Limit(r*decrease))
	}
	if episode {
		b.cut, b.cutCount, b.cutSent = now, b.served, b.count()
	}
	var d float64
	switch {
	case q.RetryAfter > 0:
		d = float64(q.RetryAfter)
		b.backoffs = 0
	case reset > now:
		d = reset - now
		b.backoffs = 0
	case !episode:
		return
	default:
		// Exponential backoff with jitter, in intervals of the new rate.
		base := minBackoff
		if iv := b.iv(); iv > 0 && !math.IsInf(iv, 1) {
			base = max(base, backoffBase*iv)
		}
		j := float64(b.jitter.Uint64()>>11) / (1 << 53) // uniform in [0, 1)
		d = base * math.Exp2(float64(min(b.backoffs, 30))) * (0.5 + j)
		b.backoffs++
	}
	b.holdUntil(now, now+d)
}

// cubic is the probing rate at now: the cubic curve through decrease×rmax at
// the end of the last cooldown, flat at rmax after cubicRequests requests' worth of time, and
// growing beyond it after that. It requires that b.mu is held.
func (b *Bucket) cubic(now float64) rate.Limit {
	k := min(max(cubicRequests/b.rmax, 1), 30) // seconds
	// The curve starts when the cooldown ends, and probes up to twice rmax.
	x := 1 - max(now-max(b.cut, b.hold), 0)/float64(time.Second)/k
	return rate.Limit(b.rmax * min(1-(1-decrease)*x*x*x, 2))
}

// holdUntil holds every caller until t, capped by MaxCooldown; the first
// request after the hold goes alone (see Bucket.own). It requires that b.mu is held and the
// state owned.
func (b *Bucket) holdUntil(now, t float64) {
	if now >= b.hold {
		b.holdFrom = now
	}
	t = min(t, b.holdFrom+b.maxCooldown)
	if t <= b.hold {
		return
	}
	if now >= b.hold {
		b.stats.cooldowns++
		b.note(Event{Kind: EventCooldown, Until: b.epoch.Add(time.Duration(t))})
	}
	b.hold, b.probe = t, true
	if b.store != nil {
		b.corr.Hold, b.corrReady = max(b.corr.Hold, time.Duration(t-now)), true
	}
}
