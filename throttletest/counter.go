package throttletest

import (
	"math"
	"time"
)

// counter is one resource's quota state. All of its arithmetic is in
// integers, so that tests can assert exact values: time is counted in units
// (1ns unless Limit×Window or Burst×Window would overflow an int64, then a
// coarser power of ten), and elapsed times are offsets from the handler's
// start. The windows live in window.go, the buckets in bucket.go, the log
// in log.go.
//
// counter is not safe for concurrent use; the Handler's mutex guards it.
type counter struct {
	q     Quota
	limit int64         // q.Limit
	burst int64         // the buckets' capacity: q.Burst, or limit
	unit  time.Duration // the unit of w and of every time below
	w     int64         // q.Window in units

	// FixedWindow and SlidingWindow: the current window is [start, start+w),
	// the previous one ended at prevEnd (at start, when they are contiguous).
	start      int64
	prevEnd    int64
	curr, prev int64 // requests counted in the current and previous window

	// TokenBucket, GCRA and LeakyBucket. The bucket holds burst − debt/w
	// tokens: taking a token adds w to debt, and every unit of time removes
	// limit from it.
	debt int64
	last int64 // time of the last refill

	// SlidingLog: the times of the requests logged in the last window,
	// oldest first, as of at (the last advance).
	logged []int64
	at     int64
	// SlidingLog with AlignFirstRequest: the end of the record that the
	// reset states, opened by the first request after the last one ended.
	recordEnd int64

	// Quota.Block: refused until blockEnd (0: not blocked).
	blockEnd int64

	counts Counts
}

// newCounter returns the counter of q, whose window boundaries fall offset
// after the handler's start and every Window from there (for contiguous
// windows; offset is in [0, q.Window)).
func newCounter(q Quota, offset time.Duration) *counter {
	q = q.normalize()
	c := &counter{q: q, limit: int64(q.Limit), burst: int64(q.Burst), unit: 1}
	if c.burst == 0 {
		c.burst = c.limit
	}
	// Keep max(limit, burst)×(w+1) within an int64: the largest product
	// formed.
	for int64(q.Window/c.unit)+1 > math.MaxInt64/max(c.limit, c.burst) {
		c.unit *= 10
	}
	c.w = int64(q.Window / c.unit)
	switch off := int64(offset / c.unit); {
	case q.Align == AlignFirstRequest:
		c.start = -c.w // ended at 0: the first request opens a window
	case off > 0:
		c.start = off - c.w // the first window began before the handler
	}
	c.prevEnd = c.start
	return c
}

// units converts an elapsed time to whole units, rounding down.
func (c *counter) units(e time.Duration) int64 { return int64(e / c.unit) }

// advance moves the counter to elapsed time e: it rolls the windows,
// refills the bucket or trims the log. e never decreases between calls.
func (c *counter) advance(e time.Duration) {
	if c.blockEnd > 0 && c.units(e) >= c.blockEnd {
		// The block is over: the quota starts over, empty.
		c.blockEnd = 0
		c.curr, c.prev, c.debt, c.logged = 0, 0, 0, c.logged[:0]
	}
	switch {
	case c.q.Algorithm.windowed():
		c.roll(c.units(e))
	case c.q.Algorithm == SlidingLog:
		c.trim(c.units(e))
	default:
		c.refill(c.units(e))
	}
}

// allows reports whether one more request fits in the quota. advance must
// have been called for the current time.
func (c *counter) allows(e time.Duration) bool {
	now := c.units(e)
	switch {
	case c.blockEnd > 0:
		return false
	case c.q.Algorithm == FixedWindow:
		return c.curr < c.limit
	case c.q.Algorithm == SlidingWindow:
		return c.slidingAllows(now)
	case c.q.Algorithm == SlidingLog:
		return int64(len(c.logged)) < c.limit
	default:
		return c.bucketAllows()
	}
}

// take counts one admitted request.
func (c *counter) take() {
	switch {
	case c.q.Algorithm.windowed():
		c.curr++
	case c.q.Algorithm == SlidingLog:
		c.logged = append(c.logged, c.at)
	default:
		c.debt += c.w
	}
}

// refuse counts one request refused at elapsed time e, if the quota counts
// refusals (Quota.CountRefused), and starts a block (Quota.Block); a
// request refused while blocked does neither.
func (c *counter) refuse(e time.Duration) {
	switch {
	case c.blockEnd > 0:
		return // refused while blocked: not counted
	case !c.q.CountRefused:
	case c.q.Algorithm == SlidingLog:
		c.logged = append(c.logged, c.at)
	default:
		c.curr++
	}
	if c.q.Block > 0 {
		c.blockEnd = c.units(e) + max(c.units(c.q.Block), 1)
	}
}

// stated is the limit the dialects send: the capacity for GCRA and
// LeakyBucket, as throttled and nginx-fronted APIs state it, else Limit.
func (c *counter) stated() int64 {
	switch c.q.Algorithm {
	case GCRA, LeakyBucket:
		return c.burst
	}
	return c.limit
}

// report describes the quota at elapsed time e: the requests it still
// allows, when it resets (an elapsed time), and how long a refused client
// should wait before trying again.
func (c *counter) report(e time.Duration) (remaining int64, reset, retry time.Duration) {
	now := c.units(e)
	switch c.q.Algorithm {
	case FixedWindow:
		remaining = c.limit - c.curr
		reset = c.windowEnd()
		retry = reset - e
	case SlidingWindow:
		_, nearest, share := c.prevShare(now)
		if c.q.RoundEstimate {
			share = nearest
		}
		remaining = c.limit - c.curr - share
		reset = c.windowEnd()
		retry = reset - e
	case SlidingLog:
		remaining, reset, retry = c.logReport(now)
	default:
		var resetUnits, retryUnits int64
		remaining, resetUnits, retryUnits = c.bucketReport(now)
		reset = time.Duration(resetUnits) * c.unit
		if retryUnits > 0 {
			retry = time.Duration(retryUnits)*c.unit - e
		}
	}
	if c.blockEnd > 0 {
		remaining, retry = 0, time.Duration(c.blockEnd)*c.unit-e
	}
	return max(remaining, 0), reset, max(retry, 0)
}

// delay is how long the request just admitted waits before it is answered:
// the time for the requests ahead of it to leak out of a LeakyBucket
// without NoDelay, else zero.
func (c *counter) delay() time.Duration {
	if c.q.Algorithm != LeakyBucket || c.q.NoDelay || c.debt <= c.w {
		return 0
	}
	return time.Duration(ceilDiv(c.debt-c.w, c.limit)) * c.unit
}

// ceilDiv returns ⌈a/b⌉ for a ≥ 0 and b > 0.
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}
