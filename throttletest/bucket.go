package throttletest

// The arithmetic of TokenBucket, GCRA and LeakyBucket, which differ only in
// what they state (counter.stated) and when they answer (counter.delay).
// Times are in units (see counter). The bucket holds burst − debt/w tokens.
//
// nginx's limit_req keeps an "excess", the requests waiting in its leaky
// bucket; a request is refused when the excess it would leave exceeds the
// configured burst B, and an idle bucket admits B+1 at once. That excess is
// the debt here, less one request, in a bucket of capacity B+1.

// refill drains the debt for the time since the last refill.
func (c *counter) refill(now int64) {
	d := now - c.last
	if d <= 0 {
		return
	}
	if d >= ceilDiv(c.debt, c.limit) {
		c.debt = 0
	} else {
		c.debt -= d * c.limit
	}
	c.last = now
}

// bucketAllows reports whether a whole token is left.
func (c *counter) bucketAllows() bool {
	return c.debt <= (c.burst-1)*c.w
}

// bucketReport returns the whole tokens left, when the bucket will be full
// (GCRA's "reset after"), and, if no token is left, when one will be; both
// times are in units, zero retry meaning a token is left.
func (c *counter) bucketReport(now int64) (remaining, full, next int64) {
	remaining = c.burst - ceilDiv(c.debt, c.w)
	full = now + ceilDiv(c.debt, c.limit)
	if excess := c.debt - (c.burst-1)*c.w; excess > 0 {
		next = now + ceilDiv(excess, c.limit)
	}
	return remaining, full, next
}
