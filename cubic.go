package throttle

import (
	"math"
	"time"
)

// The curve a server that states no quota is probed along after a 429
// (probing.go): the first success after the first hold (recovered), and
// the rate at each answer (cubic), from its plateau (plateauAt). Part of
// the server model (model.go): pure, no clock, no lock.

// recovered folds the first success after the first episode's hold, for
// the request sent at sent and answered at now. The server took the first
// burst and then nothing more until sent: its window ended before then, so
// it serves at least that burst over that time, and the guess from the
// burst over a second is capped by it (a window's quota over its length,
// when the hold probed at its end). A burst of fewer than measureAnswers
// that measures a rate over a request a second is no window's quota to
// measure by, unless the probe that was served went at a length windows
// are given (firstProbe, cycle): a bucket that others share refuses probes
// as long (four clients on nginx's limit_req, 10 r/s, each took 2 for its
// burst, a backoff's probe at 1.4 s for the window's end, and stayed at
// 1.45/s: 46% of the rate used, against 80% when they doubled from the
// guess), but a window that others share serves again at its length, and
// this client's part of its quota over it is this client's rate (four
// clients on ulule-bare, 30 per 3 s, took about 7 each and were served at
// 3 s; doubling from the guess, together they spent the next window in
// 0.9 s and each drew a 429: 19–25 429s and 109–113 served in 12 s, against
// 18 and 116 on the plateau, four runs each; flask-bare's log alike, echo's
// bucket 24–27 against 17–20; on counting-bare's and HAProxy's sliding
// counters, served at 5 s, what they served fell from 86–98 to 78–80,
// their 429s alike; nginx's four alike). A small window (5 a minute) still
// bounds the rate: doubling from a request a second would not go under it.
func (m *model) recovered(sent, now instant) {
	m.first = false
	m.cycleStart, m.okAtCycle = sent, m.ok-1 // the probe began the window after the first (cycle)
	if m.slowStart {
		return
	}
	if d := sent.sub(m.firstAt) / float64(time.Second); d >= 1 {
		if r := m.firstOK / d; m.firstOK >= measureAnswers || r < slowStartRate || m.heldAsTold || m.cycle > 0 {
			// The rate is at least r: the curve starts on its plateau
			// there, not below it, and what is served is measured from
			// this request on (it is one of them), not over the hold.
			// Where the hold ended when the server said, what it served
			// before the hold, over the hold, is a window's quota (or
			// this client's part of it, however few) over its length:
			// the rate, not a bound under it or a guess. The curve keeps
			// a safety share under it, as under a told rate, and climbs
			// past it only after measuredRequests. (Four clients on a
			// log of 30 per 3 s took 7 or 8 each; doubling from that
			// guess, two of them drew 429s within a second.)
			m.rmax = min(m.rmax, r)
			if m.heldAsTold {
				m.rmax = min(m.rmax, safety*r)
				m.measured = m.rmax
			}
			m.plateauAt(now)
			m.cut, m.okAtCut = sent, m.ok-1
			return
		}
	}
	// Back within a second, or too few to tell: a bucket that refills
	// faster than the guess, whose burst was no window's quota. Double
	// from the guess until a 429 measures the rate.
	m.slowStart = true
}

// cubic is the probing rate at now: the cubic curve through decrease×rmax
// at the last cut, flat at rmax after cubicRequests requests' worth of time
// (k), and growing beyond it after that, up to its top, maxClimb×rmax
// (reached at about 1.7 k). At 2 k with no 429, while the client sends at
// half the rate or more, the top becomes the new rmax and the curve climbs
// on from its plateau: a rate measured low is not kept for good. In slow
// start, from a guess, the rate doubles instead.
//
// The top was a quarter over rmax, with no climb past it: nginx's limit_req
// (10 r/s, no headers) then stayed at 1.25× a first guess of 5/s, 86–88 of
// 125 served in 12 s, where the climb serves 121–125. A tenth drew 20 429s
// on echo's bucket in three 12 s runs, against 24 with a quarter, and the
// windows did alike with either. Tops that grew with each climb in a row
// (a fifth over, then two fifths) served no more of the no-header windows
// (ulule-bare and counting-bare, five 12 s runs each: 981 of 1200 served,
// against 991 with a tenth each time).
func (m *model) cubic(now instant) float64 {
	k := min(max(cubicRequests/m.rmax, 1), 30) * float64(time.Second)
	// t is the time along the curve: from the end of the last cut's hold,
	// or from k at the last plateau, whichever came later; since then
	// the server served m.ok-okSince.
	since, okSince := max(m.cut, m.holdEnd), m.okAtCut
	t := max(now.sub(since), 0)
	if m.plateau >= since { // at one instant (no latency), the plateau is the later
		since, okSince = m.plateau, m.okAtPlateau
		flat := 0.0
		if m.measured > 0 {
			flat = measuredRequests / m.rmax * float64(time.Second)
		}
		t = k + max(now.sub(since)-flat, 0)
	}
	if m.slowStart {
		return m.rmax * decrease * math.Exp2(min(t/slowStartDoubling, 40))
	}
	if t >= 2*k && m.ok-okSince >= m.rmax*now.sub(since)/float64(time.Second)/2 {
		// A k past the plateau with no 429, and at least half of the
		// rate used (a client that sends less learns nothing of the
		// server's limit): the server serves the top. It is the new
		// plateau, and the curve climbs on from there.
		m.rmax *= maxClimb
		m.plateauAt(now)
		return m.rmax
	}
	x := (t - k) / k
	return m.rmax * min(1+(1-decrease)*x*x*x, maxClimb)
}

// plateauAt puts the curve on its plateau at now: at rmax, flat for a
// while, its climb beyond it to come.
func (m *model) plateauAt(now instant) {
	m.plateau, m.okAtPlateau = now, m.ok
}
