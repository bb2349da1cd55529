package throttletest

import (
	"fmt"
	"math"
	"time"
)

// normalize returns q with its zero and out-of-range fields replaced by the
// documented defaults. It panics on an unknown Algorithm: that is a mistake
// in the test, not a server behaviour.
func (q Quota) normalize() Quota {
	if q.Limit <= 0 {
		q.Limit = DefaultLimit
	}
	if q.Limit > MaxLimit {
		q.Limit = MaxLimit
	}
	if q.Window <= 0 {
		q.Window = DefaultWindow
	}
	switch q.Algorithm {
	case FixedWindow, SlidingWindow, TokenBucket:
	default:
		panic(fmt.Sprintf("throttletest: unknown %v", q.Algorithm))
	}
	return q
}

// counter is one resource's quota state. All of its arithmetic is in
// integers, so that tests can assert exact values: time is counted in units
// (1ns unless Limit×Window would overflow an int64, then a coarser power of
// ten), and elapsed times are offsets from the handler's start.
//
// counter is not safe for concurrent use; the Handler's mutex guards it.
type counter struct {
	q     Quota
	limit int64         // q.Limit
	unit  time.Duration // the unit of w, now and last
	w     int64         // q.Window in units

	// FixedWindow and SlidingWindow.
	win        int64 // index of the current fixed window
	curr, prev int64 // admissions in window win and in window win-1

	// TokenBucket. The bucket holds limit − debt/w tokens: taking a token
	// adds w to debt, and every unit of time removes limit from it.
	debt int64
	last int64 // time of the last refill, in units

	counts Counts
}

func newCounter(q Quota) *counter {
	q = q.normalize()
	c := &counter{q: q, limit: int64(q.Limit), unit: 1}
	// Keep limit×(w+1) within an int64: the largest product formed below.
	for int64(q.Window/c.unit)+1 > math.MaxInt64/c.limit {
		c.unit *= 10
	}
	c.w = int64(q.Window / c.unit)
	return c
}

// units converts an elapsed time to whole units, rounding down.
func (c *counter) units(e time.Duration) int64 { return int64(e / c.unit) }

// advance moves the counter to elapsed time e: it rolls the fixed windows
// and refills the bucket. e never decreases between calls.
func (c *counter) advance(e time.Duration) {
	now := c.units(e)
	switch c.q.Algorithm {
	case FixedWindow, SlidingWindow:
		idx := now / c.w
		if idx <= c.win {
			return
		}
		if idx == c.win+1 {
			c.prev = c.curr
		} else {
			c.prev = 0
		}
		c.curr, c.win = 0, idx
	case TokenBucket:
		if d := now - c.last; d > 0 {
			if d >= ceilDiv(c.debt, c.limit) {
				c.debt = 0
			} else {
				c.debt -= d * c.limit
			}
			c.last = now
		}
	}
}

// allows reports whether one more request fits in the quota. advance must
// have been called for the current time.
func (c *counter) allows(e time.Duration) bool {
	switch c.q.Algorithm {
	case SlidingWindow:
		// estimate < limit ⇔ ⌊estimate⌋ < limit, for an integer limit.
		return c.curr+c.weightedPrev(e)/c.w < c.limit
	case TokenBucket:
		return c.debt <= (c.limit-1)*c.w
	default:
		return c.curr < c.limit
	}
}

// take counts one admitted request.
func (c *counter) take() {
	if c.q.Algorithm == TokenBucket {
		c.debt += c.w
		return
	}
	c.curr++
}

// weightedPrev is prev × (w − elapsedInCurrentWindow), the previous window's
// share of the sliding estimate, times w.
func (c *counter) weightedPrev(e time.Duration) int64 {
	in := c.units(e) - c.win*c.w
	return c.prev * (c.w - in)
}

// report describes the quota at elapsed time e: the requests it still
// allows, when it resets (an elapsed time), and how long a refused client
// should wait before trying again.
func (c *counter) report(e time.Duration) (remaining int64, reset, retry time.Duration) {
	now := c.units(e)
	switch c.q.Algorithm {
	case TokenBucket:
		remaining = c.limit - ceilDiv(c.debt, c.w)
		reset = time.Duration(now+ceilDiv(c.debt, c.limit)) * c.unit
		if excess := c.debt - (c.limit-1)*c.w; excess > 0 {
			retry = time.Duration(now+ceilDiv(excess, c.limit))*c.unit - e
		}
	case SlidingWindow:
		remaining = c.limit - c.curr - ceilDiv(c.weightedPrev(e), c.w)
		reset = time.Duration((c.win+1)*c.w) * c.unit
		retry = reset - e
	default:
		remaining = c.limit - c.curr
		reset = time.Duration((c.win+1)*c.w) * c.unit
		retry = reset - e
	}
	return max(remaining, 0), reset, max(retry, 0)
}

// ceilDiv returns ⌈a/b⌉ for a ≥ 0 and b > 0.
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}
