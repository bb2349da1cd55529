package throttle

import (
	"context"
	"math"
	"net/http"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

// Pace is how a bucket spends the quota a server reports; see [Config.Pace].
type Pace int

const (
	// PaceEven paces at 95% of the server's steady rate until the server is
	// shown to be a fixed window, then spreads what it has left over the
	// time until the window ends, so that callers never burst the quota and
	// then stall until the reset. Against servers whose quota refills
	// continuously (sliding windows, token buckets, GCRA) it never falls
	// below 95% of the server's steady rate.
	PaceEven Pace = iota
	// PaceBurst lets callers spend what is left in the window at once,
	// then holds them until the window resets. Servers shown to refill
	// continuously are paced as with PaceEven.
	PaceBurst
)

// A Flight is a request admitted by [Bucket.Begin] and not yet answered. The
// bucket counts it as in flight, so that the server's Remaining, which does
// not know of it yet, is read correctly. Call [Flight.Done] exactly once with
// the response, or with nil when no response came, and [Flight.Settle] when
// the request's actual cost is known.
type Flight struct {
	b    *Bucket
	sent instant         // when it was admitted
	seq  float64         // its sequence number among the bucket's admissions
	ctx  context.Context // Begin's, for Config.Trace
	cost int             // the tokens it has taken: BeginN's n, then what Settle said
}

// Begin waits for a token as [Bucket.Wait] does and records the request as in
// flight until [Flight.Done]. Use it around each request when the bucket is
// driven directly (an SDK whose transport is not net/http): it tells the
// bucket which of its admissions the server had counted when it answered.
// A queued Begin must leave time for the answer: it fails with
// [ErrWaitTooLong] when the predicted wait ends later than ctx's deadline
// less the time an answer takes (a moving mean of the bucket's answers, and
// at least 5 ms), for a request let go then would likely spend the server's
// quota and time out.
func (b *Bucket) Begin(ctx context.Context) (Flight, error) { return b.beginAt(ctx, 1, b.now()) }

// BeginN is [Bucket.Begin] for a request that costs n tokens, as
// [Bucket.WaitN] takes them: a request counted in tokens of an LLM's quota,
// say. It fails as WaitN does, with [ErrExceedsBurst] when n is more than
// the bucket holds; a negative n is an error. A request of cost 0 is
// admitted at once, as WaitN(ctx, 0) is, and is in flight all the same.
// When the actual cost is known, report it with [Flight.Settle].
func (b *Bucket) BeginN(ctx context.Context, n int) (Flight, error) {
	return b.beginAt(ctx, n, b.now())
}

// beginAt is BeginN with a reading of the bucket's clock taken just before.
func (b *Bucket) beginAt(ctx context.Context, n int, now instant) (Flight, error) {
	sent, seq, err := b.waitAt(ctx, n, now, true)
	if err != nil {
		return Flight{}, err
	}
	return Flight{b, sent, float64(seq), ctx, n}, nil
}

// Done ends the flight with its response, which it observes as
// [Bucket.Observe] does. resp nil means that no response came (a transport
// error or a cancelled request): the request leaves the in-flight count and,
// if it was the bucket's probe, another caller probes. Done does not read or
// close the body. Only a flight's first Done (or DoneQuota) counts: a second
// does nothing.
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
	f.b.limitFlights(resp.Header, arrived)
}

// DoneQuota is [Flight.Done] for callers that parse the response themselves:
// status is the HTTP status (0: no response) and q what the server said. Set
// Limit and Remaining to -1 when the server did not state them: the zero
// Quota says that the quota is spent.
func (f Flight) DoneQuota(status int, q Quota) {
	if f.b != nil {
		f.doneAt(status, q, f.b.now())
	}
}

// doneAt is DoneQuota for an answer that arrived at now, on the bucket's
// clock.
func (f Flight) doneAt(status int, q Quota, now instant) {
	if f.b == nil {
		return
	}
	f.b.observe(status, q, &f, now)
}

// Observe folds a response into the bucket: its rate-limit headers (read by
// [ParseHeaders]) cap what may go out until the server's window ends, teach
// the rate when [Config.Limit] is zero, and a 429 (or a 503 with
// Retry-After, or GitHub's 403 with no quota left) holds every caller of the
// bucket until the server's Retry-After, else its reset, else a backoff with
// jitter, capped by [Config.MaxCooldown]. Callers queued in Wait are
// re-planned. Observe reads only the status and headers; resp nil is
// ignored.
//
// Observe does not know which request the response answers: it takes the
// requests in flight ([Bucket.Begin]) as not yet counted by the server and
// the others as counted. Prefer [Flight.Done], which knows.
func (b *Bucket) Observe(resp *http.Response) {
	if resp == nil {
		return
	}
	arrived := time.Now()
	b.observe(resp.StatusCode, ParseHeaders(resp.Header, arrived), nil, b.at(arrived))
	b.limitFlights(resp.Header, arrived)
}

// ObserveQuota is [Bucket.Observe] for callers that parse the response
// themselves: status is the HTTP status and q what the server said (-1 for
// counts not stated, as in [Flight.DoneQuota]).
func (b *Bucket) ObserveQuota(status int, q Quota) {
	b.observe(status, q, nil, b.now())
}

// observe folds one answer, which arrived at now, into the bucket. f is the
// request's flight, nil when not known.
func (b *Bucket) observe(status int, q Quota, f *Flight, now instant) {
	defer b.emit()
	b.mu.Lock()
	read := now // the reading a reset stated as a delta was anchored to
	now = b.ownAtLocked(now)
	if f != nil && !b.landLocked(f.seq) {
		// Done again: the flight ended at the first call, and its answer
		// was folded in then. A second would answer for a probe that is
		// already answered, and let another go.
		b.releaseLocked(now)
		b.mu.Unlock()
		return
	}
	defer b.answered(f, status, &q, now, b.hold)
	if strings.EqualFold(q.Unit, unitConcurrent) {
		// A concurrency quota (a caller's own parse): it bounds the flights,
		// not the rate.
		b.limitFlightsLocked(now, q.Limit)
		q.Limit, q.Remaining, q.Reset, q.Window = notStated, notStated, time.Time{}, 0
	}
	o := observation{arrived: now, status: status, q: q, admitted: float64(b.count())}
	if f != nil {
		o.seq, o.sent, o.cost = f.seq, f.sent, float64(f.cost)
		o.inflight, o.behind = float64(len(b.flying)), b.flying.before(o.seq)
	} else {
		o.seq, o.sent, o.inflight = o.admitted-float64(b.inflight.Load()), now, -1
	}
	if b.learning {
		b.probing = max(b.probing-1, 0)
		if status != 0 {
			b.learning, b.probing = false, 0
		}
	}
	if status != 0 { // no response: nothing was learned
		if !q.Reset.IsZero() {
			o.reset, o.resetOK = b.at(q.Reset), true
			// Whole seconds, as an instant or as a delta from the
			// arrival as read. Not from now: another caller may have
			// read the clock later and taken the lock first, and a
			// delta of 3 s then looked exact to the microsecond (fastify
			// under a burst: its resets, taken as precise, moved 10 ms
			// between two answers, and it was taken for GCRA).
			o.delayed = wholeSeconds(o.reset.sub(read))
			o.coarse = q.Reset.Nanosecond() == 0 || o.delayed
			if end, ok := finerReset(o, read); ok {
				o.reset, o.coarse, o.delayed = end, false, false
			}
		}
		b.applyLocked(now, b.model.observe(o), o.sent)
	}
	b.replanLocked(now)
	b.releaseLocked(now)
	b.mu.Unlock()
	if b.store != nil {
		b.sendCorrection()
	}
}

// finerReset returns the reset of a 2xx that states it twice: in whole
// seconds, and as a Retry-After to the millisecond, a delay from the
// reading (read) that falls within the whole seconds' slack. A 2xx has no
// hold to name: its Retry-After is when the window gives back, the wait a
// 429 would name. (rate-limiter-flexible documents msBeforeNext ÷ 1000 beside
// the epoch second rounded up; taken in whole seconds, a fixed window of
// 3 s was held 0.7 s past its end, and requests waiting for it outlived
// their deadlines.) Stated to the millisecond is a whole number of
// milliseconds and not of seconds (a decimal, retry-after-ms): a
// Retry-After date, measured from the arrival to the nanosecond, is no
// finer than its whole second. A 429's Retry-After is a hold of its own and
// refines nothing (a token bucket's names its next token, not its reset),
// nor does a 202's (when to ask again how a task is doing).
func finerReset(o observation, read instant) (instant, bool) {
	ra := o.q.RetryAfter
	if !o.coarse || o.status < 200 || o.status > 299 || o.status == http.StatusAccepted ||
		ra <= 0 || ra%time.Millisecond != 0 || ra%time.Second == 0 {
		return 0, false
	}
	end := read.add(float64(ra))
	if math.Abs(end.sub(o.reset)) > slack(o) {
		return 0, false
	}
	return end, true
}

// wholeSeconds reports whether ns is a whole number of seconds, as a delta
// the parser anchored to the arrival is, within a millisecond: a caller of
// DoneQuota or ObserveQuota parsed the answer at a reading of its own,
// before the bucket's. (A reset stated to the millisecond that falls
// within one of whole seconds from the arrival is then taken for a
// whole-second one: its end is held a second longer, once in a thousand
// answers. The other way round, a whole-second reset taken as exact, a
// fixed window was taken for GCRA.)
func wholeSeconds(ns float64) bool {
	frac := math.Mod(math.Abs(ns), float64(time.Second))
	return frac < float64(time.Millisecond) || frac > float64(time.Second-time.Millisecond)
}

// applyLocked makes the gate enforce the model's plan, made from the answer
// to a request sent at sent. It requires the state owned.
func (b *Bucket) applyLocked(now instant, p plan, sent instant) {
	if p.capOn && p.capEnd > now {
		// A correction: the server allows less than the bucket would admit.
		if tokens, left := b.tokensNowLocked(now), p.capSeq(now)-float64(b.count())-b.flying.before(p.capRef); left < tokens {
			b.stats.corrections++
			if b.limit != rate.Inf {
				b.stats.drift = tokens - left // a bucket with no local limit yet had no estimate
			}
		}
	}
	if p.rate != 0 {
		b.setLimitLocked(now, rate.Limit(p.rate))
		b.boundDebtLocked(now)
	}
	if b.auto && p.burst != b.autoCap {
		b.autoCap = p.burst
		b.setParamsLocked(now, b.limit, b.burst) // the default burst follows the plan's
	}
	if p.spare > 0 {
		b.setTokensLocked(now, max(b.tokensAtLocked(now), min(p.spare, float64(b.burst))))
	}
	if iv := b.iv(); p.paceFirst && iv > 0 && !math.IsInf(iv, 1) {
		b.tat = max(b.tat, p.firstSent.add(iv)) // as if admitted at this rate (firstPace)
	}
	b.capOn, b.capBase, b.capAt, b.capGrow, b.capEnd, b.capRef = p.capOn, p.capBase, p.capAt, p.capGrow, p.capEnd, p.capRef
	if b.store != nil && p.capOn && p.capEnd > now {
		// Only lower the shared tokens: this process's count leaves out the
		// other processes', so a raise could overshoot; the rate refills the
		// store. The store, not the cap, is a shared bucket's budget: a spent
		// cap becomes a spent hold, which the store shares until an answer to a
		// request sent after it says otherwise (the Correction's Spent and
		// Sent). Shared as a hold that never shortens, one process's Remaining 0
		// until a sliding log's whole-window reset held every process for it,
		// while another's probe had been told 5 left (Flask-Limiter's log, four
		// processes: 74–91 of 120 served in 12 s).
		left := b.capLeftLocked(now)
		b.corr.SetTokens, b.corr.Tokens, b.corrReady = true, left, true
		b.corr.Spent, b.corrSent = 0, sent
		if left < 1 && p.capEnd != never {
			end, _ := b.holdHereLocked(now, p.capEnd)
			b.corr.Spent = max(time.Duration(end-now), 0)
		}
	}
	if p.holdOn && p.hold > now {
		b.holdUntilLocked(now, p.hold)
	}
	// A cap whose window ends now (a reset of 0 s) ends here, not at the
	// next reading of the clock: one request let go in between, the probe
	// went with it (FuzzBucket/73c297ee2c0520d6).
	b.endLocked(now)
	if p.alone {
		b.learning, b.probing = true, 0
	}
	b.modelFlights = int64(p.flights)
	b.capFlightsLocked(now)
}

// capLeftLocked is how many more the cap admits at now: up to its highest
// sequence number, less the requests admitted before the answered one
// (capRef) and still in flight (the server may not have counted them yet).
func (b *Bucket) capLeftLocked(now instant) float64 {
	return b.capBase + b.capGrow*max(now.sub(b.capAt), 0) - float64(b.count()) - b.flying.before(b.capRef)
}

// cappedLocked reports whether the cap refuses n more admissions at now.
func (b *Bucket) cappedLocked(now instant, n int) bool {
	return b.capOn && now < b.capEnd && float64(n) > b.capLeftLocked(now)+1e-9
}

// capFreeLocked returns when the cap admits n more (those queued ahead counted
// in n), never if only its end does and it has none.
func (b *Bucket) capFreeLocked(now instant, n int) instant {
	need := float64(n) - b.capLeftLocked(now)
	if need <= 1e-9 || !b.capOn || now >= b.capEnd {
		return now
	}
	at := b.capEnd
	if b.capGrow > 0 {
		// It grows from capAt, which may be ahead (a sliding window's next
		// tick): a timer set for now plus need/capGrow woke a nanosecond
		// at a time until then. Rounded up: a timer set for it finds the
		// cap grown enough.
		from := max(now, b.capAt)
		at = min(at, from.add(math.Ceil((float64(n)-b.capLeftLocked(from))/b.capGrow)))
	}
	return at
}

// boundDebtLocked keeps the wait for the next token within MaxCooldown
// when the server's answers set the rate: a debt taken at a fast rate
// (admissions the server then counted) is not repaid at a slow one for
// longer than any other server-derived wait. The rate the user told
// (Config.Limit, when it binds) is the user's own wait and keeps its debt.
// It requires the state owned.
func (b *Bucket) boundDebtLocked(now instant) {
	iv := b.iv()
	if iv == 0 || math.IsInf(iv, 1) || b.ceiling > 0 && b.limit >= b.ceiling {
		return
	}
	if least := 1 - b.maxCooldown/iv; b.tokensAtLocked(now) < least {
		b.setTokensLocked(now, least)
	}
}

// setLimitLocked sets the rate, bounded by the configured ceiling, keeping the
// tokens. It requires the state owned.
func (b *Bucket) setLimitLocked(now instant, r rate.Limit) {
	if r = normLimit(r); r == 0 {
		return
	}
	if b.ceiling > 0 {
		r = min(r, b.ceiling)
	}
	if r != b.limit {
		b.setParamsLocked(now, r, b.burst)
	}
}

// holdUntilLocked holds every caller until t, capped by MaxCooldown, and
// with a Store every process (Correction.Hold); the first request after the
// hold goes alone and the others wait for its answer. It requires the state
// owned.
func (b *Bucket) holdUntilLocked(now, t instant) {
	if t, longer := b.holdHereLocked(now, t); longer && b.store != nil {
		b.corr.Hold, b.corrReady = max(b.corr.Hold, time.Duration(t-now)), true
	}
}

// holdHereLocked is holdUntilLocked for this process alone. It returns the
// hold's end, capped, and whether it lengthened the hold.
func (b *Bucket) holdHereLocked(now, t instant) (instant, bool) {
	if now >= b.hold {
		b.holdFrom = now
	}
	t = min(t, b.holdFrom.add(b.maxCooldown))
	if t <= b.hold {
		return t, false
	}
	if now >= b.hold {
		b.stats.cooldowns++
		b.noteLocked(Event{Kind: EventCooldown, Until: b.wall(t)})
	}
	b.hold, b.probe = t, true
	return t, true
}

// An observation is one answer, as the model sees it. Instants are on the
// bucket's clock.
type observation struct {
	seq      float64 // the request's sequence number (its admission's, counted from 1)
	admitted float64 // admissions when the answer arrived: the last sequence number given
	// behind is how many requests admitted before this one were still
	// unanswered when it was answered: the server may not have counted
	// them yet (they were overtaken on the way).
	behind float64
	// inflight is how many of this client's requests were still unanswered
	// when it was answered, this one not counted; −1: not known (an answer
	// observed without its Flight).
	inflight float64
	sent     instant // when the request was admitted
	cost     float64 // its tokens, its Flight's cost (0: not known, taken as 1)
	arrived  instant // when its answer arrived
	status   int
	q        Quota
	reset    instant // q.Reset on the bucket's clock, if resetOK
	resetOK  bool    // the answer stated a reset
	coarse   bool    // the reset has whole-second resolution
	// delayed: the reset was stated as whole seconds from the arrival (a
	// delta), not as an instant: its jump from another window's reset is
	// no cadence. Such a reset counts from the request that opened its
	// window (a fixed window from the first request, a sliding log's
	// record: nest's), so the jump holds the time between that request
	// and the old window's end too, and whole seconds of rounding on
	// either side. (nest's 3 s log read as 3.16 s from its first probe, a
	// second late, and was paced at 9.0/s.)
	delayed bool
}

// An answer is what the model keeps of one observation; the zero one is none.
type answer struct {
	ok             bool
	seq, remaining float64
	sent, arrived  instant // its request's admission, its arrival
	reset          instant
	resetOK        bool    // the answer stated its reset
	coarse         bool    // in whole seconds
	zero           bool    // a delay of 0 s
	admitted       float64 // admissions when it arrived
}
