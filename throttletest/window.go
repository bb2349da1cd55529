package throttletest

import (
	"math/bits"
	"time"
)

// The arithmetic of FixedWindow and SlidingWindow. Times are in units (see
// counter).

// roll moves the windows to time now. Contiguous windows advance by whole
// windows; with AlignFirstRequest the request at now opens the next one.
func (c *counter) roll(now int64) {
	if now < c.start+c.w {
		return
	}
	next := now
	if c.q.Align != AlignFirstRequest {
		next = c.start + (now-c.start)/c.w*c.w
	}
	c.prev, c.prevEnd = c.curr, c.start+c.w
	c.curr, c.start = 0, next
}

// windowEnd is the end of the current window, as an elapsed time.
func (c *counter) windowEnd() time.Duration {
	return time.Duration(c.start+c.w) * c.unit
}

// slidingAllows reports whether the sliding estimate at now leaves room for
// one more request: curr + prev×overlap/w < limit, which for an integer
// limit is curr + ⌊prev×overlap/w⌋ < limit; with Quota.RoundEstimate the
// product is rounded to the nearest request instead, as go-chi/httprate
// rounds it.
func (c *counter) slidingAllows(now int64) bool {
	floor, nearest, _ := c.prevShare(now)
	if c.q.RoundEstimate {
		return c.curr+nearest < c.limit
	}
	return c.curr+floor < c.limit
}

// prevShare returns the previous window's share of the sliding estimate at
// now, prev × overlap / w, rounded down, to the nearest (halves up) and up,
// where overlap is how much of the previous window the span (now−w, now]
// still covers: w − (now − start) when windows are contiguous, less when
// they are not. The product is formed in 128 bits: with CountRefused, prev
// has no bound but an int64's.
func (c *counter) prevShare(now int64) (floor, nearest, ceil int64) {
	overlap := min(max(c.prevEnd+c.w-now, 0), c.w)
	hi, lo := bits.Mul64(uint64(c.prev), uint64(overlap))
	q, r := bits.Div64(hi, lo, uint64(c.w)) // hi < w, since overlap ≤ w
	floor, nearest, ceil = int64(q), int64(q), int64(q)
	if r != 0 {
		ceil++
	}
	if r >= uint64(c.w)-r { // r/w ≥ ½, without forming 2r
		nearest++
	}
	return floor, nearest, ceil
}
