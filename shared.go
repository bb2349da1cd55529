package throttle

import (
	"context"
	"math"
	"time"
)

// Sharing a bucket through a Store (see Config.Store).
//
// The tokens and the cooldown live in the store; everything else stays in
// the process: the FIFO queue (only its head asks the store), learning from
// the server's headers, and the in-flight count. Each answer's correction is
// sent to the store, so a 429 seen by one process holds them all.

const (
	// DefaultStoreShare is the share of the rate a process uses on its own
	// while its Store is unreachable, when Config.StoreShare is zero.
	DefaultStoreShare = 0.5
	// storeRetry is how long a process limits locally after a store error
	// before it asks the store again.
	storeRetry = float64(time.Second)
)

// shared is the part of a Bucket's state used with a Store. Its fields are
// guarded by Bucket.mu; store and key are set once by NewBucket.
type shared struct {
	store     Store
	key       string
	share     float64
	down      instant // until when the store is not asked
	degraded  bool    // limiting locally since the last store error
	fallback  instant // theoretical arrival time of the local share
	corr      Correction
	corrSent  instant // when the request went whose answer corr carries
	corrReady bool
}

// sharedTake takes n tokens from the store, or from the local share while
// the store is unreachable. It returns 0 when it took them, else how long
// until they could be there, or ctx's error if ctx ended meanwhile. It
// requires that b.mu is not held.
func (b *Bucket) sharedTake(ctx context.Context, n int) (time.Duration, error) {
	b.mu.Lock()
	now := b.ownLocked()
	limit, burst, down := b.limit, b.burst, now < b.down
	b.mu.Unlock()
	if !down {
		wait, err := b.store.Take(ctx, b.key, n, limit, burst)
		if cerr := ctx.Err(); err != nil && cerr != nil {
			return 0, cerr // the caller gave up; the store may be fine
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		now = b.ownLocked()
		if err == nil {
			b.storeUpLocked()
			return wait, nil
		}
		b.storeFailedLocked(now, err)
	} else {
		b.mu.Lock()
		defer b.mu.Unlock()
		now = b.ownLocked()
	}
	return dur(math.Ceil(b.takeShareLocked(now, n))), nil
}

// takeShareLocked is the local bucket used while the store is unreachable: the
// configured share of the rate and burst. It returns 0 when it took n tokens,
// else the nanoseconds until it could.
func (b *Bucket) takeShareLocked(now instant, n int) float64 {
	iv := b.iv()
	if iv == 0 {
		return 0
	}
	iv /= b.share
	tau := iv * max(1, math.Floor(float64(b.burst)*b.share))
	tat, d := max(b.fallback, now), float64(n)*iv
	if wait := tat.sub(now) + d - tau; wait > 0 {
		return wait
	}
	b.fallback = tat.add(math.Ceil(d)) // as takeLocked rounds
	return 0
}

// storeFailedLocked switches to local limiting for a while.
func (b *Bucket) storeFailedLocked(now instant, err error) {
	b.down = now.add(storeRetry)
	if !b.degraded {
		b.degraded = true
		b.fallback = now
		b.noteLocked(Event{Kind: EventStoreDown, Err: err})
	}
}

// storeUpLocked notes that the store answers again.
func (b *Bucket) storeUpLocked() {
	if b.degraded {
		b.degraded = false
		b.noteLocked(Event{Kind: EventStoreUp})
	}
}

// allowShared is AllowN for a bucket with a Store. It requires that b.mu is
// not held.
func (b *Bucket) allowShared(n int) bool {
	b.mu.Lock()
	now := b.ownLocked()
	switch {
	case b.q.len > 0 || now < b.hold:
		b.mu.Unlock()
		return false
	case b.learning:
		ok := b.takeLocked(now, n) != 0
		b.mu.Unlock()
		return ok
	}
	b.mu.Unlock()
	defer b.emit()
	// The store bounds the call (redisstore: Options.Timeout).
	if wait, err := b.sharedTake(context.Background(), n); wait != 0 || err != nil {
		return false
	}
	b.countAdmission(n)
	return true
}

// waitShared is WaitN for a bucket with a Store: the caller queues locally,
// and the head of the queue asks the store, sleeping for the wait it
// reports. It returns the admission's sequence number. It requires that
// b.mu is not held.
func (b *Bucket) waitShared(ctx context.Context, n int, flight bool) (uint64, error) {
	defer b.emit()
	b.mu.Lock()
	now := b.ownLocked()
	w, err := b.admitLocked(ctx, now, n, flight)
	if err != nil {
		b.refusedLocked(err)
		b.mu.Unlock()
		return 0, err
	}
	b.mu.Unlock()

	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		b.mu.Lock()
		now := b.ownLocked()
		if w.done {
			b.mu.Unlock()
			return w.seq, w.err
		}
		wait := -1.0 // until signalled
		if now >= w.deadline {
			// Behind the head, nothing plans the wait: MaxWait is checked
			// here instead.
			err := tooLong(now.sub(w.since), w.deadline.sub(w.since), w.byCtx)
			b.finishLocked(now, w, err)
			b.dispatchLocked(now)
			b.mu.Unlock()
			return 0, err
		}
		if b.q.head != w && w.deadline != never {
			wait = w.deadline.sub(now)
		}
		if b.q.head == w {
			switch {
			case now < b.hold:
				wait = b.hold.sub(now)
			case w.flight && b.flightsFull():
				// until a flight ends (observe signals the head)
			case b.learning:
				if seq := b.takeLocked(now, n); seq != 0 {
					b.grantLocked(now, w, seq)
					b.mu.Unlock()
					return seq, nil
				}
			default:
				b.mu.Unlock()
				d, err := b.sharedTake(ctx, n)
				if err != nil {
					return 0, b.cancel(ctx, w)
				}
				b.mu.Lock()
				now = b.ownLocked()
				if w.done { // refused meanwhile (a cooldown, a new burst)
					b.mu.Unlock()
					return w.seq, w.err
				}
				if d == 0 {
					seq := b.countAdmission(n)
					b.grantLocked(now, w, seq)
					b.mu.Unlock()
					return seq, nil
				}
				wait = float64(d)
			}
			if wait >= 0 && now.add(wait) > w.deadline {
				err := tooLong(wait, w.deadline.sub(now), w.byCtx)
				b.finishLocked(now, w, err)
				b.dispatchLocked(now)
				b.mu.Unlock()
				return 0, err
			}
		}
		b.mu.Unlock()

		var fire <-chan time.Time
		if wait >= 0 && wait < maxDur {
			fire = sleepFor(&timer, wait)
		}
		select {
		case <-fire:
		case <-w.turn:
		case <-w.ready:
		case <-ctx.Done():
			return 0, b.cancel(ctx, w)
		}
	}
}

// sleepFor sets *timer, made on first use, to fire after d nanoseconds,
// and returns its channel: the sleep of a waiter that wakes itself (a
// Store's head, a gate's).
func sleepFor(timer **time.Timer, d float64) <-chan time.Time {
	if *timer == nil {
		*timer = time.NewTimer(dur(d))
	} else {
		(*timer).Reset(dur(d))
	}
	return (*timer).C
}

// grantLocked ends w's wait with its tokens, admitted as sequence number
// seq, and hands the turn to the next head.
func (b *Bucket) grantLocked(now instant, w *waiter, seq uint64) {
	w.seq = seq
	if w.flight {
		b.flyLocked(seq)
	}
	b.finishLocked(now, w, nil)
	b.dispatchLocked(now)
}

// signalHeadLocked wakes the head of the queue to ask the store again.
func (b *Bucket) signalHeadLocked() {
	if h := b.q.head; h != nil {
		select {
		case h.turn <- struct{}{}:
		default:
		}
	}
}

// sendCorrection sends what the last answer said to the store. It requires
// that b.mu is not held.
func (b *Bucket) sendCorrection() {
	b.mu.Lock()
	if !b.corrReady {
		b.mu.Unlock()
		return
	}
	now := b.ownLocked()
	c := b.corr
	c.Limit, c.Burst = b.limit, b.burst
	if c.SetTokens {
		c.Sent = max(time.Duration(now.sub(b.corrSent)), 1)
	}
	b.corr, b.corrReady = Correction{}, false
	down := now < b.down
	b.mu.Unlock()
	if down || !c.SetTokens && c.Hold == 0 {
		return
	}
	err := b.store.Correct(context.Background(), b.key, c)
	b.mu.Lock()
	defer b.mu.Unlock()
	now = b.ownLocked()
	if err != nil {
		b.storeFailedLocked(now, err)
		return
	}
	b.storeUpLocked()
}
