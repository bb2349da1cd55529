package throttle

import (
	"cmp"
	"math"
	"slices"
)

// The evidence of a sliding log (Flask-Limiter's moving window, nest's
// throttler): the send instants of the requests the server counted
// (sendLog), how long a log holds one and when it gives the oldest back
// (logHold, logReturn), what its give-back says of its window (logBound),
// and whether a lump given back is a log's or a sliding counter's
// (weighLog). Part of the server model (model.go): pure, no clock, no lock.

// mayBeLog reports whether the server may be a sliding log: a bucket whose
// reset moves on with the clock (not when it is full: GCRA), seen to give
// back, but not shown to refill at a rate.
func (m *model) mayBeLog() bool {
	return m.bucket && m.refilled && !m.fullAt && !m.tokens && m.srvLimit > 0
}

// logBound bounds the window of a server that may be a sliding log (a
// reset that moves on with the clock, a refill seen, but none at a rate)
// by what it has given back of this client's requests when it answered o,
// told r left. The log then held Limit − r requests, o's among them. Of
// this client's requests answered before o was sent (counted before o for
// sure: one answered since may have been counted after it), at most
// Limit − r − 1 were still in it, so one sent no sooner than the
// (Limit − r)th newest of them had been given back: a window after it was
// counted, and it was counted no sooner than it went. Other clients'
// requests in the log only leave fewer of those in it, and a log gives
// back in the order it counted, so the bound holds whatever the others do.
// (Flask-Limiter's reset, its whole second plus one, reads a 3 s window as
// 4 s: paced at 7.1/s for the first window and lower after, 108 of 120 in
// 12 s. nest's log of 1 s, its burst counted and answered out of order,
// was bounded at 9 ms and spent at 1000/s: a 429 every window.)
func (m *model) logBound(o observation, r float64) {
	held := int(math.Ceil(m.srvLimit - r)) // o's among them
	i, ok := m.sends.newest(held, func(i int) bool { return m.sends.answered[i] < o.sent })
	if !ok {
		return
	}
	w := o.arrived.sub(m.sends.at[i]) // no sooner than the newest of this client's given back
	if m.logWin == 0 || w < m.logWin {
		m.logWin = w
		m.fitRead()
	}
}

// refuteLogBound undoes the window a log's give-back bounded (logBound)
// once a request is refused while it is in force: the bound holds only for
// a log, and a server that refuses at the pace it gave is no log of that
// window. The window goes back to what the resets read, shortened by what
// else says so (fitRead); a bound may form again while what comes back
// does not show tokens at a rate (measureAvail). (tollbooth's
// token bucket of 10 per 1 s, its answers 100 ms away: each found two
// spent, read as a log holding this client's last two requests, a window
// of 0.3 s, paced at 30/s, refused after each hold: 73 of 130 served in
// 12 s, five 429s.)
func (m *model) refuteLogBound() {
	if m.logWin == 0 || m.stated || m.winLen != m.logWin {
		return
	}
	m.logWin = 0
	m.winLen = max(m.winLen, m.winRead)
	m.fitRead()
}

// A sendLog keeps the send instants of the latest requests a server
// counted (answered, not refused), in no order: answers overtake one
// another. It holds sendLogSize: of a larger window's requests only the
// newest, so the oldest it holds is no older than the oldest counted.
// Each request's answer instant is kept beside it.
type sendLog struct {
	at       [sendLogSize]instant
	answered [sendLogSize]instant
	n        int // how many were added, all told
}

const sendLogSize = 64

func (l *sendLog) add(sent, answered instant) {
	l.at[l.n%sendLogSize], l.answered[l.n%sendLogSize] = sent, answered
	l.n++
}

// complete reports whether the log still holds every request sent after t.
func (l *sendLog) complete(t instant) bool {
	if l.n <= sendLogSize {
		return true
	}
	return slices.Min(l.at[:]) <= t
}

// longestGap returns the longest time between two requests sent one after
// the other in [from, to], and from the last of them to to, and whether the
// log holds every request sent since from.
func (l *sendLog) longestGap(from, to instant) (float64, bool) {
	if !l.complete(from) {
		return 0, false
	}
	var sent [sendLogSize]instant
	k := 0
	for i := range min(l.n, sendLogSize) {
		if t := l.at[i]; t >= from && t <= to {
			sent[k] = t
			k++
		}
	}
	slices.Sort(sent[:k])
	last, gap := from, 0.0
	for _, t := range sent[:k] {
		gap, last = max(gap, t.sub(last)), t
	}
	return max(gap, to.sub(last)), true
}

// newest returns the index of the nth newest, by its send, of the
// requests the log holds that keep takes, and whether it holds n of them.
// It sorts on the stack, not the log itself.
func (l *sendLog) newest(n int, keep func(i int) bool) (int, bool) {
	var idx [sendLogSize]int
	k := 0
	for i := range min(l.n, sendLogSize) {
		if keep(i) {
			idx[k] = i
			k++
		}
	}
	if n < 1 || n > k {
		return 0, false
	}
	kept := idx[:k]
	slices.SortFunc(kept, func(a, b int) int { return cmp.Compare(l.at[b], l.at[a]) })
	return kept[n-1], true
}

// logHold is how long a sliding log holds a request of this client's, as
// o reads: a window after the request went, plus a latency (it was counted
// on arrival). A window read from whole-second resets may be up to a
// second long (Flask-Limiter's reads 3 s as 4): a second less, until what
// the log gave back or a rate told has shortened it (fitRead). A stated
// one is exact, and so is one a rate told agrees with (toldAgrees). Where
// none is read yet, a rate told gives it (a log never turns: Bucket4j's
// headers on a log of 30 per 3 s, told 10/s, held none, so what it gave
// back read as tokens at a rate, spent on top of a burst: 7-9% refused in
// the kit; none, 95.3% used). At most 0: no window known.
func (m *model) logHold(o observation) float64 {
	w := m.knownWindow()
	if o.coarse && !m.stated && m.winLen >= m.winRead && !m.toldAgrees() && (m.logWin == 0 || m.winLen > m.logWin) {
		w -= coarseSlack
	}
	if w <= 0 {
		return 0
	}
	return w + o.arrived.sub(o.sent)
}

// logReturn returns when a sliding log gives back the oldest request of
// this client's that it still holds at o's arrival. o.arrived if none is
// held, if the log of sends may have
// lost the oldest (all it keeps are held), or if no window is known:
// nothing to wait for.
func (m *model) logReturn(o observation) instant { return m.returnAfter(o, m.logHold(o), &m.sends.at) }

// sureReturn is logReturn by each request's answer rather than its send:
// the log had counted it by then, so it is back for sure a window after,
// however slow its way there was (by o's latency, a request that took
// longer was taken back early). A client alone, told r left at o, has the
// log hold its Limit − r newest requests: the oldest of them is the next
// back, whatever the window read says of older ones (the kit's log of 5
// per 1 s, read as 1.015 s, held one given back 12 ms before, and the next
// request went at its return, a 429 in one run of 45 requests).
func (m *model) sureReturn(o observation, r float64) instant {
	hold := m.logHold(o) - o.arrived.sub(o.sent)
	back := m.returnAfter(o, hold, &m.sends.answered)
	if m.alone() && back > o.arrived {
		all := func(int) bool { return true }
		if i, ok := m.sends.newest(int(math.Ceil(m.srvLimit-r)), all); ok {
			back = max(back, m.sends.answered[i].add(hold))
		}
	}
	return back
}

// latestReturn is logReturn at the latest: for the whole window read and
// a latency, where a window read from whole-second resets may be a second
// shorter (logHold takes that second off).
func (m *model) latestReturn(o observation) instant {
	return m.returnAfter(o, m.winLen+o.arrived.sub(o.sent), &m.sends.at)
}

// returnAfter is logReturn for a log that gives each request back hold
// after its instant in from (the log's sends, or their answers).
func (m *model) returnAfter(o observation, hold float64, from *[sendLogSize]instant) instant {
	next, held := never, 0
	for i := range min(m.sends.n, sendLogSize) {
		if back := from[i].add(hold); back > o.arrived {
			next, held = min(next, back), held+1
		}
	}
	if hold <= 0 || next == never || held == sendLogSize {
		return o.arrived
	}
	return next
}

// logReturns counts the requests of this client's that a sliding log would
// have given back after from and by o's arrival: at least that many, for
// the log of sends keeps only the latest.
func (m *model) logReturns(from instant, o observation) float64 {
	return m.sends.returned(m.logHold(o), from, o.arrived)
}

// returned counts the sends that a log holding each for hold gives back
// after from and by to (none if hold is not positive).
func (l *sendLog) returned(hold float64, from, to instant) float64 {
	if hold <= 0 {
		return 0
	}
	n := 0.0
	for i := range min(l.n, sendLogSize) {
		if back := l.at[i].add(hold); back > from && back <= to {
			n++
		}
	}
	return n
}

// othersReturned estimates how many of the other clients' requests a
// sliding log gave back between the answers prev and o: of what it held
// when it answered prev (the limit less what prev was told left), those
// that were not this client's, given back evenly over the window that
// holds them. Where the log of sends may have lost some of that window,
// the others' share of the whole refill (all, at the limit rate, over the
// time between). Taken at their share of the whole rate instead, a client
// alone that paced under it read the shortfall as others' spending, which
// lowered its share and so its pace, and held itself there: 0.8 on
// Flask-Limiter's log of 10 per 1 s (94 of 120 served in 12 s).
func (m *model) othersReturned(prev answer, o observation, refill float64) float64 {
	hold := m.logHold(o)
	if hold <= 0 || !m.sends.complete(prev.arrived.add(-hold)) {
		return m.othersShare() * refill
	}
	others := max(m.srvLimit-prev.remaining-m.sends.held(hold, prev.sent, prev.arrived), 0)
	return min(others, others*o.arrived.sub(prev.arrived)/hold)
}

// held counts the sends that a log holding each for hold still holds at t,
// of those that went by sentBy.
func (l *sendLog) held(hold float64, sentBy, t instant) float64 {
	n := 0.0
	for i := range min(l.n, sendLogSize) {
		if at := l.at[i]; at <= sentBy && at.add(hold) > t {
			n++
		}
	}
	return n
}

// weighLog weighs what came back between the causal answers prev and o (o
// told r left, own sent between) against a sliding log. It reports a log's
// lump: no more than the log gives back of this client's requests a whole
// window after they went, and more than a sliding counter gives back
// meanwhile (its last window's count, spread over the window). Whole-second
// resets cannot show a log of a second by moving on with the clock (they
// move a second or less inside a window: see remaining). (Flask-Limiter's
// log of 10 per 1 s, told 10/s: a window after a burst of two, its probe
// was told one left, read as a counter whose last window counted one, and
// held a second to the counter's next tick.) A client alone, its share
// seen, that is given back more than such a log would have (by more than
// one overtaken on the way) is on no such log, whatever lumps follow
// (notLog): a counter that reads its clock in whole seconds gives back a
// third of a 3 s window at each tick, as much, now and then, as this
// client's paced requests of a window before. A refusal, which the server
// may not have counted, shows nothing; nor does a log of sends that may
// have lost some of a window before.
func (m *model) weighLog(o observation, prev answer, r, own float64) bool {
	hold := m.logHold(o)
	if m.notLog || hold <= 0 || m.srvLimit <= 0 || limited(o.status, o.q) || !m.sends.complete(prev.arrived.add(-hold)) {
		return false
	}
	back := r - prev.remaining + own
	logged := m.logReturns(prev.arrived, o)
	if m.alone() && back > logged+1 {
		m.notLog = true
		return false
	}
	return back >= m.giveBack(o.arrived, prev.remaining, 0)*o.arrived.sub(prev.arrived)+1 && back <= logged
}
