package throttle

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// A waiter is a caller queued in WaitN. Its goroutine sleeps on ready, which
// is closed once the waiter is done: granted its tokens (err nil) or refused.
type waiter struct {
	n          int
	seq        uint64  // the admission's sequence number, once granted
	since      instant // when it joined the queue
	waited     float64 // once granted: how long it waited, in nanoseconds
	deadline   instant // never: none
	ready      chan struct{}
	turn       chan struct{} // with a Store: the head is to ask the store (again)
	prev, next *waiter       // in its level
	err        error
	base       int8 // its priority's level
	level      int8 // the level it is queued in: base, raised by aging
	flight     bool // Begin's: counted in flight when granted
	byCtx      bool // deadline is the context's, not MaxWait's
	done       bool
}

// queue holds the waiters, one first-in first-out list per priority level,
// each an intrusive doubly linked list so that admission and cancellation
// cost O(levels).
//
// The order of service is by key, since − base×aging (ties first come,
// first served): a waiter is served as if it had arrived earlier by its
// priority's lead. The lists keep that order cheaply: a waiter moves up to
// the next level (to its tail) when it has waited one aging more, so that
// at any time every key in a level is lower than every key below it. The
// head of the highest non-empty level is the next to be served, and the
// waiters a caller of level l is served before are exactly those below l.
type queue struct {
	lv     [levels]level
	head   *waiter // the next to be served
	len    int
	tokens int     // sum of n over the queue
	aging  float64 // nanoseconds per level; +Inf: none
}

func (q *queue) push(w *waiter) {
	q.lv[w.level].link(w)
	q.len++
	q.tokens += w.n
	q.setHead()
}

func (q *queue) remove(w *waiter) {
	q.lv[w.level].unlink(w)
	q.len--
	q.tokens -= w.n
	q.setHead()
}

func (q *queue) setHead() {
	q.head = nil
	for i := levels - 1; i >= 0 && q.head == nil; i-- {
		q.head = q.lv[i].head
	}
}

// each calls f for every waiter.
func (q *queue) each(f func(*waiter)) {
	for i := range levels {
		for w := q.lv[i].head; w != nil; w = w.next {
			f(w)
		}
	}
}

// Wait blocks until a token is available and takes it. Wait is shorthand for
// WaitN(ctx, 1).
func (b *Bucket) Wait(ctx context.Context) error { return b.WaitN(ctx, 1) }

// WaitN blocks until n tokens are available and takes them, or fails.
//
// Callers wait in order of priority ([WithPriority]; [PriorityNormal] by
// default) and, within a priority, strictly in arrival order: a caller
// asking for many tokens at the head of its priority is not overtaken by
// smaller requests of that priority behind it. Waiting raises a caller's
// priority by one level per [Config.Aging], so that no caller waits long
// behind a stream of higher priority ones (see [Priority]).
//
// Admission is decided at once, as if nobody were to overtake the caller:
// WaitN fails without waiting with [ErrWaitTooLong] when the predicted wait
// exceeds Config.MaxWait or ctx's deadline, with [ErrExceedsBurst] when n is
// more than the bucket holds, and with [ErrQueueFull] when Config.MaxQueue
// callers already wait and none of them would be served after it. When
// one would, the queue makes room: the waiter to be served last (the
// newest of the lowest level, aging counted) fails at once with
// ErrQueueFull instead.
//
// If the bucket changes while the caller waits (new limit, a server
// correction, a cooldown), or a caller of higher priority is put ahead of
// it, the wait is re-planned and fails with [ErrWaitTooLong] as soon as it
// can no longer end in time.
//
// If ctx ends first, the caller leaves the queue, any tokens granted to it are
// returned to the bucket, and the error wraps ctx.Err(). WaitN(ctx, 0)
// returns at once. A negative n is an error.
func (b *Bucket) WaitN(ctx context.Context, n int) error {
	_, _, err := b.waitAt(ctx, n, b.now(), false)
	return err
}

// waitAt is WaitN with a reading of the bucket's clock taken just before. It
// returns when the tokens were granted (now, unless the caller queued) and
// the admission's sequence number. With flight the admission is counted in
// flight (Begin) in the same step as it is granted, so that nobody sees it
// admitted and not in flight.
func (b *Bucket) waitAt(ctx context.Context, n int, now instant, flight bool) (instant, uint64, error) {
	if n < 0 {
		return now, 0, fmt.Errorf("throttle: WaitN: negative n (%d)", n)
	}
	if err := ctx.Err(); err != nil {
		return now, 0, fmt.Errorf("throttle: wait: %w", err)
	}
	if n == 0 && (!flight || b.flightCap.Load() == 0) {
		// Nothing to take and no in-flight limit to wait for.
		seq := b.count()
		if flight {
			b.fly(seq)
		}
		return now, seq, nil
	}
	if b.store != nil {
		seq, err := b.waitShared(ctx, n, flight)
		return b.now(), seq, err
	}
	// The lock-free path runs only while no cap is in force, so the
	// sequence number read after it matters to nothing but the model's
	// share estimate; under the mutex it is exact. A flight it admits is
	// recorded under the mutex all the same (fly): what it costs is lost in
	// BenchmarkTransportOverhead's spread.
	// A flight under an in-flight limit is admitted under the mutex, so
	// that the count it is checked against changes only by falling.
	if !flight || b.flightCap.Load() == 0 {
		if ok, at := b.allowAt(n, now); ok {
			seq := b.count()
			if flight {
				b.fly(seq)
			}
			return at, seq, nil
		}
	}
	defer b.emit()
	b.mu.Lock()
	now = b.ownAtLocked(now)
	w, seq, err := b.enqueueLocked(ctx, now, n, flight)
	if err != nil {
		b.refusedLocked(err)
	}
	b.releaseLocked(now)
	b.mu.Unlock()
	if w == nil {
		return now, seq, err
	}
	select {
	case <-w.ready:
		b.waited(ctx, w, w.err)
		return b.now(), w.seq, w.err
	case <-ctx.Done():
		err := b.cancel(ctx, w)
		b.waited(ctx, w, err)
		return b.now(), 0, err
	}
}

// refusedLocked counts and reports a refusal.
func (b *Bucket) refusedLocked(err error) {
	switch {
	case errors.Is(err, ErrQueueFull):
		b.stats.refusedFull++
	case errors.Is(err, ErrWaitTooLong):
		b.stats.refusedLong++
	case errors.Is(err, ErrExceedsBurst):
		b.stats.refBurst++
	}
	b.noteLocked(Event{Kind: EventRefused, Err: err})
}

// enqueueLocked admits a caller asking for n tokens: it grants them at once
// (nil, the sequence number, nil), refuses (nil, 0, err), or queues the caller.
// It requires the state owned.
func (b *Bucket) enqueueLocked(ctx context.Context, now instant, n int, flight bool) (*waiter, uint64, error) {
	b.q.age(now)
	if lv := PriorityFrom(ctx).level(); b.q.ahead(lv) == 0 && now >= b.hold && !(flight && b.flightsFull()) {
		if seq, ok := b.admitNowLocked(now, n); ok {
			if flight {
				b.flyLocked(seq)
			}
			if b.q.len > 0 { // it went ahead of the lower levels' waiters
				b.overtakeLocked(now, lv, n)
				b.armLocked(now)
			}
			return nil, seq, nil
		}
	}
	w, err := b.admitLocked(ctx, now, n, flight)
	return w, 0, err
}

// admitLocked queues a caller asking for n tokens, or refuses it; flight says
// that it is to be counted in flight when granted. It requires the state
// owned.
func (b *Bucket) admitLocked(ctx context.Context, now instant, n int, flight bool) (*waiter, error) {
	if err := b.fitsLocked(now, n); err != nil {
		return nil, err
	}
	if b.maxQueue < 0 {
		return nil, fmt.Errorf("%w: %d callers waiting", ErrQueueFull, b.q.len)
	}
	b.q.age(now)
	lv := PriorityFrom(ctx).level()
	var displaced *waiter
	if b.q.len >= b.maxQueue {
		// Full: room is made only by the one waiter the caller would be
		// served before that is served last.
		if displaced = b.q.last(); displaced == nil || int(displaced.level) >= lv {
			return nil, fmt.Errorf("%w: %d callers waiting", ErrQueueFull, b.q.len)
		}
	}
	deadline, byCtx := now.add(b.maxWait), false
	if d, ok := ctx.Deadline(); ok {
		at := b.at(d)
		if flight {
			// A request let go with less time left than an answer takes is
			// likely not answered in time, and the server counts it all the
			// same: quota spent for nothing, where a refusal leaves the
			// request to a caller with time for it. Let go as their
			// deadlines came, after a window's end, 6-16 of fastify's 120
			// answers in a 12 s run never reached their callers (9-21
			// with the fastest answer's time off, a burst of 16 answered
			// by Node.js taking 5-6 ms); answers 100 ms away, ±50%, 15 of
			// ulule's 113 for four clients in 12 s with the fastest's off.
			at = at.add(-b.answerTimeLocked())
		}
		if at < deadline {
			deadline, byCtx = at, true
		}
	}
	ahead := b.q.ahead(lv)
	at := b.plannedLocked(now, ahead+n)
	if at > deadline {
		return nil, tooLong(at.sub(now), deadline.sub(now), byCtx)
	}
	if displaced != nil {
		b.finishLocked(now, displaced, fmt.Errorf("%w: %d callers waiting, displaced by one of higher priority", ErrQueueFull, b.q.len))
	}
	w := &waiter{n: n, since: now, deadline: deadline, byCtx: byCtx, ready: make(chan struct{}), base: int8(lv), level: int8(lv), flight: flight}
	if b.store != nil {
		w.turn = make(chan struct{}, 1)
	}
	b.q.push(w)
	b.planWaitLocked(now, w, ahead+n)
	l := &b.q.lv[lv]
	l.slack = min(l.slack, margin(deadline, at))
	b.overtakeLocked(now, lv, n)
	if b.q.head == w {
		b.armLocked(now)
	}
	return w, nil
}

// minAnswerTime is the least time an answer is taken to need, left before
// its context's deadline when a request is let go (admitLocked), whatever
// the moving mean of answers says: from the grant, a goroutine wakes, and
// the request is written, before the round trip begins. On loopback, where
// answers took half a millisecond on the mean, requests let go with that
// much left failed at their deadlines before reaching the server, their
// tokens spent, and the next waiter waited a whole interval: 6 in 30 s of
// ulule's 60 per 10 s told 6/s, 170 of 180 served.
const minAnswerTime = float64(5 * time.Millisecond)

// answerTimeLocked is the time an answer takes, left before a request's
// deadline when it is let go: the moving mean of the answers
// (model.latency), and no less than minAnswerTime. It requires the state
// owned.
func (b *Bucket) answerTimeLocked() float64 { return max(b.model.latency, minAnswerTime) }

// answerTime is answerTimeLocked for a caller that does not hold b.mu.
func (b *Bucket) answerTime() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.answerTimeLocked()
}

// fitsLocked returns ErrExceedsBurst if n tokens are more than the bucket
// holds. The default burst (Config.Burst zero) counts requests; it grows
// to hold the largest cost asked (a cost in tokens is not refused for a
// burst of a few requests), up to the most that could ever be admitted:
// the server's limit per window when that is known, else what the rate
// brings in MaxWait or MaxCooldown, whichever is shorter. A bucket with no
// rate yet (learning) records the cost for the burst it will have. It
// requires the state owned.
func (b *Bucket) fitsLocked(now instant, n int) error {
	if n <= b.burst && b.iv() != 0 || !b.auto && b.iv() == 0 {
		return nil
	}
	if b.auto && float64(n) <= b.mostCostLocked() {
		if n > b.minCost {
			b.minCost = n
			if b.iv() != 0 {
				b.setParamsLocked(now, b.limit, b.burst)
			}
		}
		return nil
	}
	if b.iv() == 0 {
		return nil // no rate: nothing to exceed until one is known
	}
	return fmt.Errorf("%w: %d tokens asked, burst is %d", ErrExceedsBurst, n, b.burst)
}

// mostCostLocked is the largest cost the default burst grows to hold: see
// fitsLocked. It requires the state owned.
func (b *Bucket) mostCostLocked() float64 {
	if l := b.model.srvLimit; l > 0 {
		return l
	}
	iv := b.iv()
	if iv == 0 || math.IsInf(iv, 1) {
		return math.Inf(1) // no rate yet: bounded once one is learned
	}
	return min(b.maxWait, b.maxCooldown) / iv
}

// admitNowLocked admits a caller of n tokens at now if they are there (a
// cost of 0 takes none) and returns the admission's sequence number. It
// requires the state owned.
func (b *Bucket) admitNowLocked(now instant, n int) (uint64, bool) {
	if n == 0 {
		return b.count(), true
	}
	seq := b.takeLocked(now, n)
	return seq, seq != 0
}

// overtakeLocked re-plans the waiters below level lv, n tokens of which were
// put ahead of them: those that can no longer be served in time fail at once.
// Only the levels whose slack may have run out are walked, unless a cooldown or
// a server's cap is in force, under which waiting changes the plan too. It
// requires the state owned.
func (b *Bucket) overtakeLocked(now instant, lv, n int) {
	if lv == 0 || b.q.ahead(0) == b.q.ahead(lv) || b.store != nil || b.learning {
		return // nobody below, or nothing plans by the tokens ahead
	}
	if now < b.hold || b.capOn && now < b.capEnd {
		b.replanLevelsLocked(now, lv-1)
		return
	}
	d := float64(n) * b.iv()
	for i := lv - 1; i >= 0; i-- {
		if b.q.lv[i].slack -= d; b.q.lv[i].slack < 0 {
			b.replanLevelsLocked(now, i)
			return
		}
	}
}

// plannedLocked returns when a caller needing n tokens, counting those of the
// callers ahead of it, will be served. It requires the state owned.
func (b *Bucket) plannedLocked(now instant, n int) instant {
	if b.learning && b.probing > 0 || b.store != nil {
		// Unknown: until the probe's answer, or kept in the store.
		return max(b.hold, now)
	}
	// Beyond what the server has left: when the cap grows enough, or its
	// window ends.
	// Tokens come back during a hold only up to the burst, so the n are
	// counted from its end: what the callers ahead take there is gone, and
	// the rest come after it at the rate (FuzzBucket/f433bd6567a6c291: a
	// waiter behind another of a full burst was let in under MaxWait by
	// the hold's end alone, and served 3.6 s beyond it).
	at := max(b.hold, b.readyAtLocked(max(now, b.hold), n), b.capFreeLocked(now, n))
	if head := b.q.head; head != nil && n > head.n && at > now && (b.probe && at == b.hold || b.capOn && at == b.capEnd) {
		// At a hold's or a cap's end one request goes alone, and the
		// others wait for its answer: its round trip is part of their
		// wait. (Planned at the end itself, requests whose deadlines came
		// a few milliseconds after it were let go as the probe's answer
		// came, and timed out on the wire.)
		at = at.add(b.model.latency)
	}
	return at
}

// margin is how much later than at a waiter with deadline may be served, in
// nanoseconds: +Inf for no deadline, even one planned for never.
func margin(deadline, at instant) float64 {
	if deadline == never {
		return math.Inf(1)
	}
	return deadline.sub(at)
}

func tooLong(wait, allowed float64, byCtx bool) error {
	need := dur(wait).Round(time.Millisecond)
	have := dur(allowed).Round(time.Millisecond)
	if byCtx {
		return fmt.Errorf("%w: need %v, context deadline in %v: %w", ErrWaitTooLong, need, have, context.DeadlineExceeded)
	}
	return fmt.Errorf("%w: need %v, MaxWait %v", ErrWaitTooLong, need, have)
}

// unplannedTooLong is the refusal of a caller whose wait nothing could
// plan (an answer was waited for: a probe's, or a request in flight to
// end) at the end of the allowed wait.
func unplannedTooLong(allowed float64, byCtx bool) error {
	have := dur(allowed).Round(time.Millisecond)
	const why = "not served within %v: waiting for an answer (the probe's, or one of the requests in flight)"
	if byCtx {
		return fmt.Errorf("%w: "+why+", the context's deadline: %w", ErrWaitTooLong, have, context.DeadlineExceeded)
	}
	return fmt.Errorf("%w: "+why+", MaxWait", ErrWaitTooLong, have)
}

// finishLocked removes w from the queue and wakes it with err (nil: granted).
func (b *Bucket) finishLocked(now instant, w *waiter, err error) {
	b.q.remove(w)
	w.done, w.err = true, err
	close(w.ready)
	if err != nil {
		b.refusedLocked(err)
		return
	}
	w.waited = now.sub(w.since)
	b.stats.waited++
	b.stats.waitTime += w.waited
	if w.waited >= b.slowWait {
		b.noteLocked(Event{Kind: EventWait, Wait: time.Duration(now - w.since)})
	}
}

// dispatchLocked serves the head of the queue for as long as the tokens are
// there, then sets the timer for the next head. It requires the state owned.
func (b *Bucket) dispatchLocked(now instant) {
	if b.store != nil {
		b.signalHeadLocked() // the head asks the store itself
		return
	}
	for w := b.q.head; w != nil && now >= b.hold; w = b.q.head {
		if w.flight && b.flightsFull() {
			break // first in, first out: the head waits for a flight to end
		}
		seq, ok := b.admitNowLocked(now, w.n)
		if !ok {
			break
		}
		w.seq = seq
		if w.flight {
			b.flyLocked(seq)
		}
		b.finishLocked(now, w, nil)
	}
	b.armLocked(now)
}

// armLocked sets the bucket's timer to wake the queue at its head's planned
// time. Only the head has a timer, so waking it does not wake everyone. It
// requires the state owned.
func (b *Bucket) armLocked(now instant) {
	w := b.q.head
	at := never
	switch {
	case w == nil:
	case w.flight && b.flightsFull():
		// A flight's end serves the head (observe re-plans): wake only at
		// the first deadline, to refuse who can wait no longer. A probe
		// given up for lost is still in flight: woken for that, the head
		// found the flights full and was woken again at the same instant,
		// for good (FuzzBucket/0e29a1fb93961aed).
		at = min(at, b.q.firstDeadline())
	case b.learning && b.probing > 0:
		// No plan before the probe's answer: wake at the first deadline,
		// so that nobody waits beyond MaxWait for that answer, or when the
		// probe is given up for lost.
		at = max(b.probeLostLocked(), b.readyAtLocked(now, w.n), b.capFreeLocked(now, w.n))
		at = min(at, b.q.firstDeadline())
	default:
		at = b.plannedLocked(now, w.n)
		if b.learning { // no plan to refuse by either (FuzzBucket/9d2b44693a18501b)
			at = min(at, b.q.firstDeadline())
		}
	}
	if at.sub(now) >= maxDur {
		if b.timer != nil {
			b.timer.Stop()
		}
		return
	}
	// Never early: at the planned instant hold, cap and tokens all allow
	// the head (take's 1ns of slack absorbs the rounding of the float
	// arithmetic that planned it), so a timer that fires can always serve
	// it and never re-arms at zero.
	d := dur(at.sub(now))
	if b.timer == nil {
		b.timer = time.AfterFunc(d, b.wake)
	} else {
		b.timer.Reset(d)
	}
}

// wake runs on the timer: it serves whoever is ready.
func (b *Bucket) wake() {
	defer b.emit()
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.ownLocked()
	if b.learning || b.flightsFull() {
		b.replanLocked(now) // a deadline came before the answer waited for
	} else {
		b.dispatchLocked(now)
	}
	b.releaseLocked(now)
}

// replanLocked is called after the bucket changed under its queue. It refuses
// the callers that can no longer be served within their deadline, in order of
// service so that each one's removal moves those behind it up, then serves the
// head. It requires the state owned.
func (b *Bucket) replanLocked(now instant) {
	if b.kick != nil {
		poke(b.kick)
	}
	b.q.age(now)
	b.replanLevelsLocked(now, levels-1)
	b.dispatchLocked(now)
}

// replanLevelsLocked is replanLocked for the waiters of level top and below, those
// above kept as they are. It sets each level's slack to the least margin
// of its waiters. It requires the state owned and the queue aged.
func (b *Bucket) replanLevelsLocked(now instant, top int) {
	ahead := b.q.ahead(top + 1)
	for i := top; i >= 0; i-- {
		l := &b.q.lv[i]
		l.slack = math.Inf(1)
		for w := l.head; w != nil; {
			next := w.next
			if err := b.fitsLocked(now, w.n); err != nil {
				b.finishLocked(now, w, fmt.Errorf("%w (now)", err))
			} else if at := b.plannedLocked(now, ahead+w.n); at > w.deadline {
				b.finishLocked(now, w, tooLong(at.sub(now), w.deadline.sub(now), w.byCtx))
			} else if (b.learning || b.flightsFull()) && now >= w.deadline {
				b.finishLocked(now, w, unplannedTooLong(w.deadline.sub(w.since), w.byCtx))
			} else {
				ahead += w.n
				l.slack = min(l.slack, margin(w.deadline, at))
			}
			w = next
		}
	}
}

// untakeLocked gives back the n tokens of an admission that was never
// sent. It requires the state owned.
func (b *Bucket) untakeLocked(n int) {
	if b.learning {
		b.probing = max(b.probing-1, 0) // the probe was never sent
	} else if iv := b.iv(); iv != 0 && !math.IsInf(iv, 1) {
		b.tat = b.tat.add(-float64(n) * iv)
	}
	b.capBase += float64(n) // its sequence numbers were not spent at the server
}

// cancel takes w out of the queue after its context ended. It requires that
// b.mu is not held.
func (b *Bucket) cancel(ctx context.Context, w *waiter) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.ownLocked()
	defer b.releaseLocked(now)
	switch {
	case !w.done:
		b.q.remove(w)
		b.stats.canceled++
	case w.err != nil:
		return w.err
	default: // granted as the context ended: give the tokens back
		b.uncountLocked(w)
		b.untakeLocked(w.n)
		if w.flight {
			b.landLocked(float64(w.seq)) // it never flew
		}
	}
	b.dispatchLocked(now)
	return fmt.Errorf("throttle: wait: %w", ctx.Err())
}
