package throttle

import (
	"math"
	"time"
)

// The server's window when it does not state one: its length read from
// the resets (learnWindow), fitted within a whole-second reading's slack
// to what else tells it (fitRead: a rate told, a log's give-back, finer
// resets), the window a rate told gives (toldWindow, windowTold,
// toldAgrees), how uncertain a reset is (slack, pairSlack), and the jump
// between two windows' resets (learnCadence), and the window that what a
// steady pace left shows (fitPace). Part of the server model (model.go):
// pure, no clock, no lock.

// learnWindow infers the window's length when the server does not state it.
func (m *model) learnWindow(o observation) {
	m.most = max(m.most, o.q.Remaining+1)
	if !o.resetOK || o.reset <= o.arrived {
		return
	}
	d := o.reset.sub(o.arrived)
	if m.emptiesAsALog(o, d) {
		// Not GCRA after all: a log whose reset is when its newest
		// request leaves it. Its window, unless stated, is read as any
		// other's, anew, and what it gave back is weighed against that
		// window again: held as long as GCRA's, the log's give-back
		// looked like a bucket's tokens (tokens).
		m.fullAt, m.gcra.log, m.tokens = false, true, false
		if !m.stated {
			m.winLen, m.winRead = 0, 0
		}
	}
	if m.stated {
		return
	}
	if m.fullAt {
		// GCRA: the reset is when the bucket is full again, so its
		// deficit refills in it: Limit − Remaining where it holds its
		// limit, less where it holds less. (OpenAI and Anthropic document
		// limits per minute enforced over shorter spans: 30 per 3 s in a
		// bucket of 10, its deficit of 1 read as 21, was paced at 100/s
		// and 8.8% refused.) A bucket never seen full reads as smaller:
		// paced slower, never faster.
		if l, c := m.srvLimit, min(m.srvLimit, m.most); l > 0 && o.q.Remaining <= 3*c/4 {
			if o.coarse {
				d += coarseSlack / 2
			}
			m.winLen = d * l / (c - o.q.Remaining)
		}
		return
	}
	if o.coarse {
		d = math.Ceil(d/coarseSlack-1e-6) * coarseSlack // a whole second, give or take rounding, is that second
	}
	m.winLen = max(m.winLen, d)
	if o.coarse {
		m.winRead = max(m.winRead, d)
	} else if m.winE0OK && m.winE0Coarse {
		// The window's first reading, in whole seconds, to the
		// millisecond: from its arrival, not this one's, later.
		m.fineRead = max(m.fineRead, o.reset.sub(m.winT0))
	}
	m.fitRead()
}

// A fullRead is a reset read as when the server's bucket is full again
// (GCRA): d after the answer that was told r left; log: a later one showed
// a sliding log instead (emptiesAsALog).
type fullRead struct {
	r, d float64
	log  bool
}

// emptiesAsALog reports whether the answer o, its reset d after it, shows
// that a server read as GCRA resets when a sliding log empties: a window
// after the newest request it counted (Flask-Limiter's moving window). Of
// every answer's reading, from the first answer on, the one with the most
// left is kept (gcra), and each reading with less is weighed against it. A
// bucket's deficit refills at its rate, so with more left it is full
// sooner, by the deficit's share of the window; a log's reset stays a
// window ahead of each request however much is left. Two readings whose
// deficits differ by a quarter of the limit or more, where GCRA would have
// the one with more left two seconds or more sooner than the other (well
// past a whole second's rounding), and it is not: a log. The first answer
// tells most: one request in a log holds it a window, one spent of GCRA's
// bucket a limit's share of that. (Kept only from the first answer read
// as GCRA's, the reading with 13 of the kit's 30 left and its reset at
// 3 s, IETF's dialect, w=3, was too close to the log's later ones: read as
// GCRA throughout, the give-back the log echoed a window later, less than
// GCRA's refill, was taken for others' spending, a share of 0.83, and a
// lone client used 87% of the quota.) (Flask-Limiter's 60
// per 10 s, read as GCRA, took its reset 10.7 s after an answer told 13
// left for a window of 14 s, and grew its cap at a bucket's measured rate
// where the log gave nothing back: a 429 in each of the first windows.)
// Only for a client shown to be alone (its share seen, and whole): where
// others spend, the newest request may be theirs, and read as GCRA, four
// clients on its 30 per 3 s drew fewer 429s (1.2 a 12 s run, 13 runs) than
// read as a log (2.5, 12 runs).
func (m *model) emptiesAsALog(o observation, d float64) bool {
	l, r := m.srvLimit, o.q.Remaining
	if l <= 0 || r < 0 || r >= l {
		return false
	}
	hi, lo := m.gcra, fullRead{r: r, d: d}
	if hi.d == 0 || lo.r > hi.r {
		m.gcra.r, m.gcra.d = r, d
		return false
	}
	if !m.fullAt || !m.alone() || hi.r-lo.r < l/4 {
		return false
	}
	gcra := lo.d * (l - hi.r) / (l - lo.r) // the reset GCRA would state with hi.r left
	return lo.d-gcra >= 2*coarseSlack && hi.d > lo.d-coarseSlack
}

// fitRead shortens a window read from whole-second resets, which may be
// up to a second long (a reset rounded up, or Flask-Limiter's, its second
// plus one), to what else says how long it is, within that second: the
// window a rate told (Config.Limit) gives the server's limit, or what a
// sliding log gave back (logBound). Or, where no rate was told, within two
// seconds (the reading rounded up to its second, and the reset rounded
// up), to the same readings made to the millisecond by finer resets of
// the same windows (a 2xx's Retry-After beside a whole-second reset,
// rate-limiter-flexible's: its 3 s, read as 4 from its first answer, was
// paced at 7/s through its first window). A log that gave back more than a
// second sooner than its resets read is no log as read, and a window known
// otherwise (a turn, a cadence) is not a reading: they stand. A rate told
// leaves a reading of a second alone, which may be any length under two.
// (Flask-Limiter's log of 10 per 1 s, told 10/s, read as 2 s: its windows
// were spent at once every 2 s, 42% used.)
func (m *model) fitRead() {
	if m.winRead <= 0 || m.winLen > m.winRead {
		return
	}
	fit := func(w, within float64) {
		// Shorter by more than a rounding error (see toldAgrees).
		if w > 0 && w < m.winLen-float64(time.Millisecond) && w >= m.winRead-within {
			m.winLen = w
		}
	}
	if w := m.toldWindow(); w > 0 && m.winRead > coarseSlack {
		fit(w, coarseSlack)
	} else if w == 0 {
		fit(m.fineRead, 2*coarseSlack)
	}
	fit(m.logWin, coarseSlack)
	fit(m.jump, coarseSlack)
}

// spanned lengthens a window read from whole-second resets that are
// instants once a window has outlasted the reading: it counted (or
// refused) a request sent longer after its first answer than the window
// read (winSpan). Such a reading came from an answer late in its window,
// and the probes it timed come as late into the next ones, each read as
// short as the last: a window of 30 per 3 s that keeps to the server's
// clock at 300 ms past its second, its resets truncated, read 2 s from a
// probe 0.7 s into its window, was probed at each reset and refused (9 in
// 30 s, 2.7% of answers, in the kit). Such windows jump by their length:
// at least that.
func (m *model) spanned() {
	if !m.stated && !m.bucket && m.winRead > 0 && m.winLen >= m.winRead && m.winSpan > m.winRead {
		m.winLen = max(m.winLen, m.winSpan, m.jump)
	}
}

// noteJump notes the jump between the whole-second resets, instants, of
// two windows in a row (fitRead). Windows that keep to a clock jump by
// their length; a window opened by the first request after the last one
// ended jumps by its length and the wait for that request, each end
// rounded the same way: by a whole number of seconds no shorter than a
// window of whole seconds. The reading, from each answer's arrival to its
// rounded-up reset, is up to a second longer than the window. (The kit's
// fixed window of 10 per 1 s from the first request, its resets rounded
// up: read as 2 s, jumps of 1 s, and each window left 2 unspent at its
// turn: 77% used.) The jump is rounded to its whole seconds: a reset is
// placed on the monotonic clock, which drifts from the wall clock the
// server counts in by some parts per million, so two whole-second resets
// a second apart may lie 10 ns short of it, and the reading of 2 s then
// was not fitted to it (express-rate-limit's legacy headers, 10 per 1 s,
// 78–84% used).
func (m *model) noteJump(j float64, passed bool) {
	j = math.Round(j/coarseSlack) * coarseSlack
	if j > 0 && (m.jump == 0 || j < m.jump) {
		m.jump = j
		m.fitRead()
	}
	if m.winLen == 0 && !m.stated && passed {
		// No window read, and the new window's reset had passed when
		// it came: a truncated second that the window ends within.
		// (A sliding counter of 10 per 1 s keeping to the server's
		// clock at 700 ms past its second, its Unix resets truncated,
		// was never paced and spent each window at its probe: 54% used
		// in the kit; 88% from its jumps.)
		m.winLen = m.jump
	}
	m.spanned()
}

// knownWindow is the window read (winLen) or, where none is yet, the one a
// rate told gives the limit (toldWindow); 0 where neither is known.
func (m *model) knownWindow() float64 {
	if m.winLen > 0 {
		return m.winLen
	}
	return m.toldWindow()
}

// toldWindow is the window a rate told (Config.Limit) gives the server's
// limit, in ns; 0 where either is not known.
func (m *model) toldWindow() float64 {
	if !m.told() || m.srvLimit <= 0 {
		return 0
	}
	return m.srvLimit / m.ceiling * float64(time.Second)
}

// windowTold reports whether the window was read from whole-second
// resets as a second longer than its length, and fitted to the one a rate
// told gives the server's limit (fitRead), and no probe at its end has
// shown it short (toldShort): the resets are then a second late (Flask-
// Limiter's, its newest request's second plus two). A reading as long as
// the told window is no sign of that (a sliding counter's resets read so):
// see toldAgrees.
func (m *model) windowTold() bool {
	return !m.toldShort && m.winLen > 0 && m.winLen < m.winRead && m.winLen == m.toldWindow()
}

// toldAgrees reports whether the window read from whole-second resets is
// the one a rate told gives the server's limit, and no probe at its end
// has shown it short (toldShort). Whole-second resets leave a second's
// doubt: rounded up, the window ends before its reset, truncated up to a
// second after it. The rate told settles it: the window counted the first
// answer, so it ends within its length of that answer, whatever the
// rounding.
func (m *model) toldAgrees() bool {
	// Within a millisecond: a rate told as 1000/60 gives a window of 60 s
	// less a few hundredths of a nanosecond.
	return !m.toldShort && !m.stated && m.winLen > 0 && m.winLen == m.winRead &&
		math.Abs(m.winLen-m.toldWindow()) < float64(time.Millisecond)
}

// refusedAtToldEnd notes a refusal of o, a probe at its cap's end (probe)
// if so, where toldEnd was the end of the window as it stood. Refused at
// the end of a window that a rate told shortened from its reading, or at
// or after the end of one it agrees with, the window is longer than told,
// or the server slides: a fixed window of that length would have turned
// (toldShort). Not where others share the quota: they may have spent the
// new window first.
func (m *model) refusedAtToldEnd(o observation, probe bool, toldEnd instant) {
	switch {
	case !probe:
	case m.windowTold():
		m.toldShort = true
	case m.toldAgrees() && o.sent >= toldEnd && m.ownShare() >= 1:
		m.toldShort = true
		if m.kind == kindUnknown {
			m.kind = kindRefill
		}
	}
}

// slack is the uncertainty of an observation's reset.
func slack(o observation) float64 {
	s := o.arrived.sub(o.sent) // the delta was measured late by the latency
	if o.coarse {
		s += coarseSlack
	}
	return s
}

// pairSlack is slack(o) where o's reset is weighed against another, in
// whole seconds if coarse: one to the millisecond is no finer than the
// whole-second one it is compared with. The other's reset is as late as its
// own latency, which the caller adds: a reset to the millisecond came 5 ms
// "closer" between answers 6 and 1 ms late, read as GCRA's (the kit's
// sliding counter in OpenAI's dialect, paced at 1/s after: 61% used).
// (rate-limiter-flexible's Retry-After on a 2xx is a whole second on a
// window's first answer and finer on the rest: the 61 ms between them read
// as a reset that came closer, GCRA's, and a spent window was held for 8 s;
// 2 ms from the window's first, as a reset that moved on with the clock, a
// bucket's.)
func pairSlack(o observation, coarse bool) float64 {
	s := slack(o)
	if coarse && o.resetOK && !o.coarse {
		s += coarseSlack
	}
	return s
}

// learnCadence corrects an inferred window by the jump between the resets
// of two consecutive windows of a sliding window, whose windows follow one
// another: the jump is the window's length. The largest reset − arrival
// seen places the length within a slack of it (a truncated whole-second
// reset shows a 3 s window as 2 s when its windows end late in a second,
// and the pace then runs at half as much again as the server refills); a
// jump within that slack above it is the length, a longer one spans more
// than one window.
func (m *model) learnCadence(jump, sl float64) {
	if m.stated || m.winLen <= 0 {
		return
	}
	tol := float64(10 * time.Millisecond)
	if jump > m.winLen+tol && jump <= m.winLen+sl+tol && jump < 2*m.winLen-tol {
		m.winLen = jump
	}
}

// A paceFit is the longest window that what a steady pace left has shown
// since from (fitPace).
type paceFit struct {
	from    instant
	most    float64
	shown   bool // the window is what a steady pace showed
	refuted bool // and yet a request was refused since
}

// restart begins a fresh stretch at t.
func (f *paceFit) restart(t instant) { f.from, f.most = t, 0 }

// fitPace shortens the window of a server that states neither a reset nor
// its window (Bucket4j's Remaining alone, read as r at o), which the time
// between two turns only bounds: a sliding window sent to at p counts p·W,
// so W is (Limit − r) ÷ p, p this client's sends over the window read.
// The most that reached over a whole window read is what the window is
// shown to be at most (others' spending only lengthens it); shorter, it is
// the window. Only on a server shown to give back inside a window (a
// fixed window's count, read mid-window, is no steady one) and not a
// bucket's, and only while half or more is spent: a token bucket sent to
// below its refill stays full, and its count says nothing of a window. A
// refusal refutes a window so shown, for what it gives back (giveBack).
// (HAProxy's request rate of 10 per 1 s, read as 2 s from its first turn,
// was paced at 4.7/s with half its quota left for good: 50% used.)
func (m *model) fitPace(o observation, r float64) {
	span := m.winLen
	if m.stated || m.kind != kindRefill || m.bucket || m.srvLimit <= 0 || span <= 0 {
		return
	}
	if limited(o.status, o.q) {
		// Refused at the pace a fitted window gives: not a sliding
		// window's count after all, or not that window (refuted).
		m.fit.refuted = m.fit.shown
		return
	}
	if !m.sends.complete(o.arrived.add(-span)) {
		return
	}
	if m.fit.from == 0 || o.arrived.sub(m.fit.from) > 2*span {
		m.fit.restart(o.arrived) // a fresh stretch
		return
	}
	sent := m.sends.returned(span, o.arrived, o.arrived.add(span)) // sent in (o.arrived − span, o.arrived]
	if sent < 5 {
		m.fit.restart(o.arrived) // no steady pace to read
		return
	}
	if r <= m.srvLimit/2 {
		m.fit.most = max(m.fit.most, m.fitWindow(o, r, span))
	}
	if o.arrived.sub(m.fit.from) < span {
		return
	}
	if m.fit.most > 0 && m.fit.most < 0.98*span {
		m.winLen, m.fit.shown = m.fit.most, true
	}
	m.fit.restart(o.arrived)
}

// fitWindow is the window that this client's sends fill with what the
// server counts, r left at o: W where W·(Limit − r) ÷ W's sends is W,
// found by iterating that from span. One step is the steady pace's
// reading; a burst in the span is counted by the server only while the
// window holds it, and the steps leave it out once the window does not.
// Each step takes a burst's error by its part of what the window held (a
// burst of three in five: 3/8 a step), so six leave a percent or less.
func (m *model) fitWindow(o observation, r, span float64) float64 {
	w := span
	for range 6 {
		sent := m.sends.returned(w, o.arrived, o.arrived.add(w))
		if sent < 1 {
			break
		}
		w = min((m.srvLimit-r)*w/sent, span)
	}
	return w
}
