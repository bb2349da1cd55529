package throttletest

import "time"

// The arithmetic of SlidingLog. Times are in units (see counter).

// trim drops from the log what is older than a Window at now: the requests
// the quota has given back.
func (c *counter) trim(now int64) {
	c.at = now
	if c.q.Align == AlignFirstRequest && now >= c.recordEnd {
		c.recordEnd = now + c.w // a request after the record's end opens the next
	}
	n := 0
	for n < len(c.logged) && c.logged[n] <= now-c.w {
		n++
	}
	c.logged = c.logged[n:]
}

// logReport is what a SlidingLog states at now: what it still admits, when
// it will be empty (its newest request's time plus a Window, or a Window
// from now when it is) or, with AlignFirstRequest, when its record ends,
// and when one more request fits (zero: now).
func (c *counter) logReport(now int64) (remaining int64, reset, retry time.Duration) {
	n := int64(len(c.logged))
	reset = time.Duration(now+c.w) * c.unit
	switch {
	case c.q.Align == AlignFirstRequest:
		reset = time.Duration(c.recordEnd) * c.unit
	case n > 0:
		reset = time.Duration(c.logged[n-1]+c.w) * c.unit
	}
	if n >= c.limit {
		retry = time.Duration(c.logged[n-c.limit]+c.w-now) * c.unit
	}
	return c.limit - n, reset, retry
}
