package throttle

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// A gate admits the requests of one bucket (a key, or a scope the server
// names) of a Transport with Meters: each takes its cost of that bucket and
// its Meters' at once, first come first served. The
// head of the queue takes from all of them in one step, under all their
// locks, when all can give; until then it holds nothing and sleeps until
// the latest of the times they can, or until one of them changes (an
// answer, a settled cost: kick). Its fields are guarded by mu; mu is taken
// before any bucket's.
type gate struct {
	mu   sync.Mutex
	q    []*gateWaiter
	kick chan struct{} // buffered: a bucket of the gate changed
}

// A gateWaiter is a request queued in a gate.
type gateWaiter struct {
	bs        []*Bucket
	costs     []int
	since     instant // when it joined the queue, on the buckets' clock
	predicted instant // when it was planned to be served, as it joined
	deadline  instant // never: none
	byCtx     bool
	turn      chan struct{} // buffered: it became the head
}

func newGate() *gate { return &gate{kick: make(chan struct{}, 1)} }

// queued returns how many wait in g.
func (g *gate) queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.q)
}

// idle reports whether nobody waits in g.
func (g *gate) idle() bool { return g.queued() == 0 }

// poke tells the gate's head that a bucket changed. It never blocks.
func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// begin admits a request that costs costs[i] of bs[i], every one at once:
// it returns the flights in the order of bs, or fails as [Bucket.WaitN]
// does. bs[0] is the request's own bucket, whose MaxQueue and MaxWait bound
// the queue and whose stats count the refusals and the waits.
func (g *gate) begin(ctx context.Context, bs []*Bucket, costs []int, now instant) ([]Flight, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("throttle: wait: %w", err)
	}
	for i, b := range bs {
		if err := b.fits(costs[i]); err != nil {
			return nil, bs[0].refused(err)
		}
	}
	g.mu.Lock()
	w := &gateWaiter{bs: bs, costs: costs, since: now, deadline: now.add(bs[0].maxWait), turn: make(chan struct{}, 1)}
	if d, ok := ctx.Deadline(); ok {
		// Time left for the answer, as a lone bucket leaves it (the gate's
		// lock before a bucket's, as takeAll takes them).
		if at := bs[0].at(d).add(-bs[0].answerTime()); at < w.deadline {
			w.deadline, w.byCtx = at, true
		}
	}
	if len(g.q) == 0 {
		if fs, _, _ := takeAll(ctx, bs, costs, now); fs != nil {
			g.mu.Unlock()
			return fs, nil
		}
	}
	var err error
	switch {
	case bs[0].maxQueue < 0 || len(g.q) >= bs[0].maxQueue:
		err = fmt.Errorf("%w: %d callers waiting", ErrQueueFull, len(g.q))
	default:
		if w.predicted = g.plannedLocked(now, w); w.predicted > w.deadline {
			err = tooLong(w.predicted.sub(now), w.deadline.sub(now), w.byCtx)
		}
	}
	if err != nil {
		g.mu.Unlock()
		return nil, bs[0].refused(err)
	}
	g.q = append(g.q, w)
	if len(g.q) == 1 {
		poke(w.turn)
	}
	g.mu.Unlock()
	return g.wait(ctx, w)
}

// plannedLocked predicts when w will be served: when every bucket holds
// its cost, those of the waiters ahead counted. A wait that only an answer
// ends (a probe, a full in-flight count) is taken as none: such a waiter
// is refused at its deadline instead. It requires g.mu held.
func (g *gate) plannedLocked(now instant, w *gateWaiter) instant {
	at := now
	for i, b := range w.bs {
		n := w.costs[i]
		for _, x := range g.q {
			if i < len(x.bs) && x.bs[i] == b {
				n += x.costs[i]
			}
		}
		at = max(at, b.planned(now, n))
	}
	return at
}

// predict returns how long a request of cost n to b, and of ms to the
// Meters, would wait now behind those queued in g.
func (g *gate) predict(b *Bucket, n int, ms []meterCost) time.Duration {
	w := &gateWaiter{bs: []*Bucket{b}, costs: []int{n}}
	for _, m := range ms {
		w.bs, w.costs = append(w.bs, m.b), append(w.costs, m.n)
	}
	now := b.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	return dur(g.plannedLocked(now, w).sub(now))
}

// wait sleeps until w is granted or refused, serving it when it is the
// head.
func (g *gate) wait(ctx context.Context, w *gateWaiter) ([]Flight, error) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	head := false
	for {
		var kick <-chan struct{}
		wake := w.deadline
		if head {
			g.mu.Lock()
			now := w.bs[0].now()
			fs, at, err := takeAll(ctx, w.bs, w.costs, now)
			switch {
			case fs != nil:
				g.leaveLocked(w)
				g.mu.Unlock()
				w.bs[0].gateWaited(ctx, w, now, nil)
				return fs, nil
			case err != nil:
			case at > w.deadline && at != never: // never: an answer tells
				err = tooLong(at.sub(now), w.deadline.sub(now), w.byCtx)
			case now >= w.deadline:
				err = unplannedTooLong(w.deadline.sub(w.since), w.byCtx)
			}
			if err != nil {
				g.leaveLocked(w)
				g.mu.Unlock()
				w.bs[0].gateWaited(ctx, w, now, err)
				return nil, w.bs[0].refused(err)
			}
			g.mu.Unlock()
			kick, wake = g.kick, min(at, w.deadline)
		}
		var fire <-chan time.Time
		if d := wake.sub(w.bs[0].now()); d < maxDur {
			fire = sleepFor(&timer, max(d, 0))
		}
		select {
		case <-w.turn:
			head = true
		case <-kick:
		case <-fire:
			if !head { // the head's deadline is checked above
				g.mu.Lock()
				g.leaveLocked(w)
				g.mu.Unlock()
				err := unplannedTooLong(w.deadline.sub(w.since), w.byCtx)
				w.bs[0].gateWaited(ctx, w, w.bs[0].now(), err)
				return nil, w.bs[0].refused(err)
			}
		case <-ctx.Done():
			g.mu.Lock()
			g.leaveLocked(w)
			g.mu.Unlock()
			w.bs[0].canceled()
			return nil, fmt.Errorf("throttle: wait: %w", ctx.Err())
		}
	}
}

// leaveLocked takes w out of the queue and, if it was the head, hands the
// turn to the next. It requires g.mu held.
func (g *gate) leaveLocked(w *gateWaiter) {
	for i, x := range g.q {
		if x == w {
			g.q = append(g.q[:i], g.q[i+1:]...)
			if i == 0 && len(g.q) > 0 {
				poke(g.q[0].turn)
			}
			return
		}
	}
}

// takeAll takes costs[i] of every bs[i] at now, under all their locks, if
// every one can give it now: the flights, in the order of bs. Otherwise it
// takes nothing and returns when the latest of them can, never if only an
// answer tells; or an error if a cost no longer fits its bucket's burst
// (one learned since). The locks are taken in the order of bs, under the
// gate's.
func takeAll(ctx context.Context, bs []*Bucket, costs []int, now instant) ([]Flight, instant, error) {
	for _, b := range bs {
		b.mu.Lock()
		now = b.ownAtLocked(now)
	}
	defer func() {
		for _, b := range bs {
			b.releaseLocked(now)
			b.mu.Unlock()
		}
	}()
	at := now
	for i, b := range bs {
		if err := b.fitsLocked(now, costs[i]); err != nil {
			return nil, at, err
		}
		at = max(at, b.gateAtLocked(now, costs[i]))
	}
	if at > now {
		return nil, at, nil
	}
	fs := make([]Flight, len(bs))
	for i, b := range bs {
		seq, ok := b.admitNowLocked(now, costs[i])
		if !ok {
			// gateAtLocked said it could: a rounding it did not see. Give
			// back what was taken and try again in a nanosecond.
			for j := range i {
				bs[j].untakeLocked(costs[j])
				bs[j].landLocked(fs[j].seq)
				if costs[j] > 0 {
					bs[j].stats.givenBack++
				}
			}
			return nil, now + 1, nil
		}
		b.flyLocked(seq)
		fs[i] = Flight{b, now, float64(seq), ctx, costs[i]}
	}
	return fs, now, nil
}

// gateAtLocked returns when b can take n for a gate's head: now if it can
// at once, never if only an answer tells (a probe out, the in-flight count
// full). It requires the state owned.
func (b *Bucket) gateAtLocked(now instant, n int) instant {
	switch {
	case b.flightsFull():
		return never
	case n == 0:
		return now
	}
	at := max(b.hold, b.readyAtLocked(now, n), b.capFreeLocked(now, n))
	if b.learning && b.probing > 0 {
		at = max(at, b.probeLostLocked()) // the probe's answer, or its loss
	}
	if at <= now+1 && b.cappedLocked(now, n) {
		return now + 1 // rounding: the cap's growth frees it in a nanosecond
	}
	return at
}

// planned is plannedLocked for a gate: when b holds n tokens.
func (b *Bucket) planned(now instant, n int) instant {
	b.mu.Lock()
	defer b.mu.Unlock()
	now = b.ownAtLocked(now)
	defer b.releaseLocked(now)
	return b.plannedLocked(now, n)
}

// fits is fitsLocked for a gate.
func (b *Bucket) fits(n int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.ownLocked()
	defer b.releaseLocked(now)
	return b.fitsLocked(now, n)
}

// refused counts and reports err, a refusal made outside b's queue, and
// returns it.
func (b *Bucket) refused(err error) error {
	defer b.emit()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refusedLocked(err)
	return err
}

// gateWaited counts and reports the wait of w, a caller of a gate of which
// b is the key's bucket, that ended at now with err (nil: served): as a wait
// of b's own queue would be, in its stats, its events (EventWait) and its
// Trace.
func (b *Bucket) gateWaited(ctx context.Context, w *gateWaiter, now instant, err error) {
	d := max(now.sub(w.since), 0)
	if err == nil && d > 0 {
		defer b.emit()
		b.mu.Lock()
		b.stats.waited++
		b.stats.waitTime += d
		if d >= b.slowWait {
			b.noteLocked(Event{Kind: EventWait, Wait: dur(d)})
		}
		b.mu.Unlock()
	}
	if b.trace != nil && b.trace.Waited != nil && (d > 0 || err != nil) {
		b.trace.Waited(ctx, WaitInfo{
			Name: b.name, N: w.costs[0], Reason: WaitRate, Err: err,
			Predicted: dur(max(w.predicted.sub(w.since), 0)), Waited: dur(d),
		})
	}
}

// canceled counts a caller that left a gate's queue as its context ended.
func (b *Bucket) canceled() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stats.canceled++
}
