package throttle

import (
	"math"
	"net/http"
	"time"
)

// Which answers say the client is over its quota (limited), cooldowns, and
// probing a server that states no quota: a 429 cuts the rate
// multiplicatively and successes grow it back along a cubic curve (TCP
// CUBIC, cubic.go), with a slow start from a guess when nothing was
// measured yet. Part of the server model (model.go): pure, no clock, no
// lock.

// Tuning of the probing.
const (
	// decrease is the factor a 429 from a server that sends no quota
	// headers applies to the rate; the rate then grows back along a cubic
	// curve, flat at the rate that drew the 429 after cubicRequests
	// requests' worth of time, and probing beyond it after that.
	// cubicRequests: 15 took nginx's limit_req (10 r/s, burst 5, no
	// headers) to 88–94% of its rate with 2–4% 429s, where 30 plateaued
	// for 4 s and got 74–83% (realworld/cmd/trace, 6 s and 12 s runs, the
	// curve then capped at twice rmax); the two windows that send no
	// headers did alike with either.
	decrease      = 0.7
	cubicRequests = 15
	// maxClimb is the curve's top, over the rate that drew the last 429; a
	// while there with no 429 makes the top the new plateau (cubic).
	maxClimb = 1.1
	// slowStartRate is where probing starts when a server that sends no
	// quota refuses before anything was measured; the rate then doubles
	// every slowStartDoubling until the next 429.
	slowStartRate     = 1.0
	slowStartDoubling = float64(500 * time.Millisecond)
	// backoffBase is the first backoff after a 429 that says nothing of when
	// to come back, in intervals of the (reduced) rate, at least minBackoff.
	// minBackoff is half a second: the shortest windows are a second long,
	// and a bucket loses nothing by the wait, for it keeps the tokens that
	// come back meanwhile, up to its burst (nginx's 5 at 10/s in half a
	// second). At 100 ms a first burst of 30 drew four or five backoffs'
	// 429s before a 3 s window ended. Three 6 s runs each of ulule-bare,
	// counting-bare and echo drew 9, 11 and 7 429s at 500 ms, against 13,
	// 14 and 16 at 250 ms (and 18, 18 and 19 at 100 ms over 12 s runs).
	//
	// backoffGrowth is how much longer each backoff in a row is, with a
	// quarter's jitter either way (after the first hold, which probes at
	// the lengths windows have: firstProbe): a window's end that nothing
	// told is found at most about a third of the whole hold late (each
	// wait about half the hold before it, up to 1.1× with the jitter), for
	// a 429 a probe (about 4 for a 3 s window, 10 for a minute's).
	// Doubling, with half's jitter, waited up to 3× the hold before it and
	// found a 3 s window's end up to 4.5 s late, and what the first window
	// served was then measured over that time: ulule-bare and counting-bare
	// served 46–114 of 120 in 12 s runs (16 runs, median 92) and drew 3–4
	// 429s a run; at 1.5, with the measure restarted at the recovery
	// (recovered), 85–109 (20 runs, median 99.5) and 4–5 429s
	// (realworld/cmd/trace); nginx's and echo's buckets did as before.
	// (These figures are from before firstProbe took the first hold.)
	backoffBase   = 2
	backoffGrowth = 1.5
	minBackoff    = float64(500 * time.Millisecond)
	// measureAnswers answers measure a rate in less than a second: fewer
	// are a guess.
	measureAnswers = 8
	// measuredRequests: a rate measured over a first hold whose end the
	// server gave (a Retry-After, not a backoff's guess) is kept, at the
	// safety share, for this many requests' worth of time before the
	// curve climbs past it: one probe's 429 in a hundred answers at most.
	// Django REST framework's log, 30 per 3 s, states nothing but a
	// 429's Retry-After, rounded up to a second: climbing after
	// cubicRequests, 2 to 3 429s a 12 s run (2.9%) and 84% used; held at
	// the measured rate itself, a 429 at its edge each time (as a told
	// rate, see cutRate); with this, one, the first burst's, and 96%
	// (realworld/cmd/trace, three runs).
	measuredRequests = 100
)

// free starts a server that sends no quota: one request at a time at first,
// until a 429 or discoverAnswers answers (then discovered); what it serves
// is measured from the request sent at sent.
func (m *model) free(sent instant) {
	if m.ceiling != 0 {
		m.cut, m.okAtCut = sent, m.ok // told the rate: it stays, and what is served is measured from here
		return
	}
	m.setRate(math.Inf(1))
	m.cut, m.okAtCut = sent, m.ok
	m.plan.alone = true
}

// nearEdge paces a rate told a hair under it (toldEdge), from the answer
// at now on, once the server, which states nothing, has served edgeServed
// or more at that rate: sent to at exactly its steady rate, a window
// refuses at its edge, where a millisecond's jitter is a refusal (a sliding
// log whose request of a window ago was counted a hair late, a fixed window
// from the first request that the pace reached a hair early), and the
// server's Retry-After holds the quota for a second or more. (Django REST
// framework's log of 30 per 3 s, told 10/s: a 429 at 3 s and a second's
// Retry-After, 106 of 120 served in 12 s; none and 119 so.) Not before: what
// goes out at first goes at the rate told, and a caller that sends less
// than it meets no edge. Jitter over the margin, a hundredth of the window,
// still meets it (answers 100 ms away, ±50 ms: as many 429s as before), and
// the refusal is then read as the edge (cutRate).
func (m *model) nearEdge(now instant) {
	if served, elapsed := m.sinceCut(now); served >= max(edgeServed, safety*m.ceiling*elapsed) {
		m.setRate(toldEdge * m.ceiling)
	}
}

// sinceCut returns what the server served (answers that were not
// refusals) since the rate was last cut or set free, and the seconds from
// then to now.
func (m *model) sinceCut(now instant) (served, elapsed float64) {
	return m.ok - m.okAtCut, max(now.sub(m.cut), 0) / float64(time.Second)
}

// discovered ends the discovery of a server that states nothing and
// refused none of discoverAnswers requests sent one at a time. No limit was
// found, but what it served one at a time is no proof that it serves more
// at once: the rate starts there and doubles (slow start) until a 429, as
// after a first answer that is one. (nginx's limit_req without nodelay
// delays the excess to its rate instead of refusing it, so one request at
// a time it served 10/s with no 429; unlimited after that, the 13 queued
// went at once and 11 were refused.)
func (m *model) discovered(now instant) {
	served, elapsed := m.sinceCut(now)
	if m.ceiling != 0 || elapsed <= 0 || served <= 0 {
		return
	}
	m.aimd, m.slowStart = true, true
	m.rmax = served / elapsed / decrease // slow start begins at decrease × rmax
	m.cut, m.okAtCut = now, m.ok
	m.plan.burst = smallBurst
}

// limited reports whether a response says that the client is over its quota.
func limited(status int, q Quota) bool {
	switch status {
	case http.StatusTooManyRequests:
		return true
	case http.StatusServiceUnavailable:
		return q.RetryAfter > 0
	case http.StatusForbidden: // GitHub: primary and secondary rate limits
		return q.RetryAfter > 0 || q.Remaining == 0
	}
	return false
}

// uniform returns a number drawn uniformly from [0, 1).
func (m *model) uniform() float64 { return float64(m.jitter.Uint64()>>11) / (1 << 53) }

// cooldown holds every caller after the server said the client is over its
// quota; probe: o's request was the probe at its cap's end.
func (m *model) cooldown(o observation, probe bool) {
	q := o.q
	quota := q.Remaining >= 0 || q.Limit >= 0
	// A 429 for a request sent before the last cut is of the same episode:
	// it may lengthen the hold, but it does not cut or back off again.
	episode := o.sent >= m.cut
	if !episode && o.arrived >= m.holdEnd && q.RetryAfter <= 0 {
		return // an answer sent before the episode's hold, arriving after it
	}
	if m.cycle > 0 && o.sent < m.cycleStart && !quota && q.RetryAfter <= 0 {
		return // of a window that has turned since (rollCycle), out of order
	}
	edge := false
	if !quota && episode && !m.cutOpen && m.ceiling != math.Inf(1) {
		m.cutOpen = true
		edge = m.cutRate(o)
	}
	if episode {
		m.cut, m.okAtCut = o.arrived, m.ok
	}
	var until instant
	sl := slack(o)
	// A window's Retry-After that is its whole-second reset is the reset,
	// as uncertain: truncated with it, it comes up to a second early, and a
	// retry then is refused again. (A bucket's is when its next token comes,
	// not a window's end.)
	retryAtReset := q.RetryAfter > 0 && o.resetOK && o.coarse && !m.bucket &&
		math.Abs(o.arrived.add(float64(q.RetryAfter)).sub(o.reset)) <= sl
	switch {
	case q.RetryAfter > 0 && !retryAtReset:
		until = o.arrived.add(float64(q.RetryAfter)) // it takes precedence
		m.backoffs, m.heldAsTold = 0, true
		m.cycle = 0 // the server times its holds: no window's length is guessed
	case o.resetOK && o.reset.sub(o.arrived) > -sl:
		// The reset, at its latest until the server is known to be a fixed
		// window whose resets are on time: a probe early is refused again.
		until = o.reset
		if !m.onTime || m.kind != kindFixed {
			until = until.add(sl)
		}
		if quota && m.plan.capOn && !m.bucket && m.plan.capEnd > o.arrived {
			// No later than the window's cap ends (capEnd): where all of
			// the window's answers and its length, stated or shown by a
			// crossing, place its latest end. A 429 says no more of
			// that end than a Remaining of 0 does. (Four clients on
			// express-rate-limit's 10 per 1 s: a client that came in
			// after the others had spent a window held two seconds
			// from each 429, to the middle of the window after the
			// next, spent again: a 429 every 2 s, nothing served.)
			until = min(until, m.plan.capEnd)
		}
		if w := m.knownWindow(); probe && m.ownShare() < 1 && o.coarse && w > 0 {
			// A probe refused where others share the quota, and a
			// whole-second reset places the end within a second: held
			// to the latest end, a client comes back at the same phase
			// of the window, and where the others spend each window at
			// its turn, is refused there each time. Spread over half of
			// that, its probes find the turn. (Four clients on
			// fastify's 5 per 1 s, whose resets are rounded up: three
			// probed 60 ms before each turn and were refused every
			// second, while the fourth spent each window alone.)
			until = until.add(m.uniform() * min(sl, w) / 2)
		}
		m.backoffs, m.heldAsTold = 0, false
	case !episode:
		return
	case m.first && m.ladder:
		// The first hold of a server that states nothing: its window's
		// end, probed at the lengths windows have.
		until = m.firstProbe(o.arrived)
		m.backoffs++
		m.heldAsTold = false
	case m.cycle > 0 && o.sent < m.cycleEnd().add(m.cycle*probeMargin) && m.ok-m.okAtCycle >= m.firstOK:
		// Refused within a window whose length the first hold found, once
		// it served as many as the first: to its end, and one probe then,
		// not a backoff's probes on the way (two or three refusals for a
		// window of 3 s, for each client that shares it). Refused before
		// that, it is no fixed window from the request that began it (a
		// sliding log counting older requests): a backoff, whose first
		// probe comes sooner. (The kit's bare log of 30 per 3 s, held to
		// each end: 84% of its quota used over 36 s, against 89% backing
		// off and 91% with this.)
		until = m.cycleEnd().add(m.cycle*probeMargin + m.latency)
		m.backoffs++
		m.heldAsTold = false
	default:
		// Exponential backoff with jitter, in intervals of the new rate.
		// A refusal that no window of the length found explains (sent
		// past its end, or before it served the first window's count)
		// ends the holds to its ends.
		m.cycle = 0
		base := minBackoff
		if m.rate > 0 && !math.IsInf(m.rate, 1) {
			base = max(base, backoffBase*float64(time.Second)/m.rate)
		}
		if edge {
			// Refused at the told rate: at the server's edge, whose
			// quota comes back within an interval (cutRate). Two for a
			// server that counted the refusal, and one more for the
			// jitter's quarter under: held two intervals less a quarter,
			// a retry was refused again by counting-bare in 2 of 4 runs.
			base = (backoffBase + 1) * float64(time.Second) / m.rate
		}
		until = o.arrived.add(m.apart(base) * math.Pow(backoffGrowth, float64(min(m.backoffs, 60))) * (0.75 + m.uniform()/2))
		m.backoffs++
		m.heldAsTold = false
	}
	if back, ok := m.earlyRetry(o, retryAtReset); ok && m.othersShare() == 0 && (!m.retriedEarly || !episode) {
		// A lone client's first refusal, or one of a request sent before
		// it came: no retry's. Where others share the quota, they took
		// what came back: the refusal is no turn's.
		until = min(until, back)
		m.retriedEarly = true
	}
	m.plan.hold, m.plan.holdOn = min(until, o.arrived.add(m.maxCooldown)), true
	m.holdEnd = max(m.holdEnd, m.plan.hold)
	if edge {
		m.plateauAt(m.holdEnd) // the curve resumes at the safety share, with no dip below it
	}
	if m.plan.capOn && m.plan.capEnd > m.plan.hold {
		// The hold's end is when to come back (Retry-After takes
		// precedence over the reset): a probe then, not the cap.
		m.plan.capEnd = m.plan.hold
	}
}

// windowLengths are the lengths that quota windows are given. A server
// that states nothing refuses until its window ends, a window's length after
// the first request where the window is a fixed one from the first request
// or a sliding log, and the first hold probes just after each length in
// turn, counted from the first request (firstProbe). Four seconds, not a
// length windows are given, bounds how late a window of three seconds
// that began before the first request is found (a sliding counter, whose
// old count weighs on past its length: counting-bare and HAProxy's request
// rate, 30 per 3 s, refused the probe at 3 s, served the one at 5 s, and
// the rate measured as 30 over 5 s served 79 of 120 in 12 s, in each of
// four runs; 97–102 with the probe at 4 s).
var windowLengths = [...]time.Duration{
	time.Second, 2 * time.Second, 3 * time.Second, counterProbe, 5 * time.Second,
	10 * time.Second, 15 * time.Second, 20 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute,
	30 * time.Minute, time.Hour,
}

// Where the first hold's probes go (firstProbe).
const (
	// counterProbe is no length windows are given (windowLengths): a
	// server that serves again there is a sliding counter, not a window
	// of that length. Its later refusals back off rather than hold to the
	// ends of windows of 4 s (counting-bare, alone: 97 and 97 of 120
	// served in 12 s held to them, 99 and 100 backing off), and what it
	// served before is no window's quota over it (recovered).
	counterProbe = 4 * time.Second
	// probeMargin is how far past a window's length a probe goes, as a
	// share of it, beside the latency: the window began when the first
	// request reached the server, and a probe that reaches it a hair
	// early is refused until the next length.
	probeMargin = 0.01
	// bucketProbe comes before the window lengths after a first burst of
	// fewer than measureAnswers: a small bucket's, refilled in half a
	// second (nginx's limit_req, 10 r/s with a burst of 5, is full again
	// by then). A bucket with a burst of measureAnswers or more loses
	// nothing by the wait at a refill of up to measureAnswers a second
	// (echo's, a burst of 20 at 10/s, is half full at a second), and a
	// window would only refuse the probe.
	bucketProbe = 500 * time.Millisecond
	// minProbeGap is the least time from a refusal to the probe after it:
	// a bucket refilling at 10/s has a token back by then.
	minProbeGap = float64(100 * time.Millisecond)
)

// firstProbe returns when to probe the first hold of a server that states
// nothing, refused at now: just after the next window length that has not
// passed since the first request (windowLengths; bucketProbe first after a
// small burst), or, past the longest, twice as long after now as now is
// after the first request. An exponential backoff (backoffGrowth) found a
// window's end up to a third of the hold late, a second of a 3 s window,
// and the first window's rate, measured over that time, was as low:
// ulule-bare and Flask-Limiter's log without headers, 30 per 3 s, served
// 93–109 of 120 in 12 s with 4 to 6 429s (probes at about 0.5, 1.25 and
// 2.4 s; 14 runs), and 113–117 with 5 probed at the lengths (4 runs,
// realworld/cmd/trace). On sliding counters, and on buckets, the two did
// alike.
func (m *model) firstProbe(now instant) instant {
	after := func(w time.Duration) instant {
		return m.firstAt.add(float64(w)*(1+probeMargin) + m.latency)
	}
	next := func(at instant) instant { return max(at, now.add(minProbeGap)) }
	m.cycle = 0
	if at := after(bucketProbe); m.firstOK < measureAnswers && at > now {
		return next(at)
	}
	// The soonest end: of the first length not yet past, or of a window
	// of a shorter length that has turned since (laterEnd).
	var soonest instant
	var length time.Duration // 0: none found
	for _, w := range windowLengths {
		at, ok := after(w), true
		passed := at <= now
		if passed {
			at, ok = m.laterEnd(w, now)
			ok = ok && w != counterProbe // no length windows are given
		}
		if ok && (length == 0 || at < soonest) {
			soonest, length = at, w
		}
		if !passed {
			break
		}
	}
	if length == 0 {
		return now.add(max(2*now.sub(m.firstAt), minProbeGap))
	}
	if soonest <= now.add(m.maxCooldown) && length != counterProbe {
		m.cycle = float64(length) // if the probe is served (recovered)
	}
	return next(soonest)
}

// laterEnd is where the first hold probes a window of length w that had
// passed when the first refused request went: the end of the window that
// request fell in, had windows of w run back to back from the first
// request. A client that sent all along, one request at a time as it does
// before the first 429, kept such windows turning, each opened by the
// first request after the last one's end: at most the longest gap between
// its sends after it. Where answers take long, one at a time is slow: a
// window's quota may last more than one window, and the first 429 come
// windows after the first request. (ulule's fixed window of 30 per 3 s
// without headers, 100 ms round trips: refused at 5.97 s, held to the next
// length, 10 s, and 61–71 of 120 served in 12 s in 6 of 14 traces of it,
// HAProxy's and counting-bare's.) It reports false where no such window
// fits: a gap between sends as long as w (a window would have ended
// unseen), or sends the log no longer holds.
func (m *model) laterEnd(w time.Duration, now instant) (instant, bool) {
	elapsed := m.firstRefused.sub(m.firstAt)
	if elapsed <= float64(w) {
		return 0, false
	}
	gap, ok := m.sends.longestGap(m.firstAt, m.firstRefused)
	if !ok || gap >= float64(w) {
		return 0, false
	}
	k := math.Floor(elapsed/float64(w)) + 1
	at := m.firstAt.add(k*float64(w)*(1+probeMargin) + (k-1)*gap + m.latency)
	return at, at > now
}

// cycleEnd is when the window in force ends, if it is as long as the first
// hold found (cycle), and began with the request sent at cycleStart; a hold
// to it probes probeMargin and a latency later.
func (m *model) cycleEnd() instant {
	return m.cycleStart.add(m.cycle)
}

// rollCycle folds a request sent at sent and served: sent past the end of
// the window in force, it began the next one. A fixed window from the first
// request ends a length after the first request it served, which is not a
// length after the one before: a window held to the end of the first found
// one length on would come early, by a pace's interval a window, and be
// refused. Taken late, an end is probed late and served; taken early (the
// answer of a request that the server still counted in the old window), a
// refusal sent past it ends the holds to its ends.
func (m *model) rollCycle(sent instant) {
	if m.cycle > 0 && sent >= m.cycleEnd() {
		m.cycleStart, m.okAtCycle = sent, m.ok-1
	}
}

// earlyRetry returns when to retry the refusal o of a server shown to give
// back before its reset, and whether it is one: once two requests' worth
// has come back, one for the retry and one for the refusal, which servers
// that count refusals added (after one, a retry one request's worth later
// was refused again). A second refusal in a row is held to its end
// (cooldown). A sliding window gives its quota back as the old window's
// count weighs less, from the refusal on, not at the end its reset says
// (httprate's Retry-After is its reset too: a probe a few milliseconds
// after a turn was refused and held a whole window, in one run of six, 53%
// used). So does a bucket shown to refill, with no Retry-After, at its
// steady rate: its reset is when it is full, or a constant, not when the
// next request comes back (tollbooth's "1", held to its latest second: 2 s
// of a refill of 10/s lost at each refusal, 112 of 130 served in 12 s with
// answers 100 ms away; 125).
func (m *model) earlyRetry(o observation, retryAtReset bool) (instant, bool) {
	q := o.q
	switch {
	case m.kind == kindRefill && !m.bucket && (q.RetryAfter <= 0 || retryAtReset) && m.plan.capGrow > 0:
		return max(m.plan.capAt, o.arrived).add(2 / m.plan.capGrow), true
	case m.bucket && m.refilled && !m.holdsToReset && q.RetryAfter <= 0 && m.steady() > 0:
		return o.arrived.add(2 * float64(time.Second) / m.steady()), true
	}
	return 0, false
}

// cutRate cuts the rate after a 429 from a server that sends no quota. It
// reports whether the 429 came at the edge: told the rate, and refused
// while pacing at it, the first time.
func (m *model) cutRate(o observation) (edge bool) {
	served, elapsed := m.sinceCut(o.arrived)
	if m.told() && m.rate >= toldEdge*m.ceiling && elapsed >= 1 && served >= safety*m.ceiling*elapsed {
		// Served at the told rate until now, and refused at it: the told
		// rate is the server's steady rate, and a window sent to at
		// exactly that rate refuses only at its edge: a sliding log
		// whose request of a window ago was a millisecond's jitter late, a
		// fixed window from the first request whose end the pace reached
		// a hair early. Its quota comes back within an interval, so the
		// rate stays a safety share under the told one (observe), with
		// no cut below it and a backoff of three intervals (cooldown). Cut
		// by decrease and held half a second, the first 429 cost 5 to 8
		// of 120 in 12 s (ulule-bare, counting-bare, flask-bare: 93% used).
		// One at a time after the hold: a sliding counter that counted the
		// refusal has room for one more after two intervals, not two
		// (counting-bare, with smallBurst: a second 429 a run).
		m.aimd, m.slowStart, m.rmax = true, false, m.ceiling
		m.plan.burst = 1
		m.setRate(safety * m.ceiling)
		return true
	}
	if m.measured > 0 && m.rate > m.measured && o.q.RetryAfter > 0 {
		// Refused once the curve climbed past a rate measured over a
		// timed hold: that rate was the server's, as a told one would be
		// (above). Back to it, with no cut below it, and on it for
		// measuredRequests again. Cut by decrease, Django REST
		// framework's log (30 per 3 s, Retry-After alone) drew a 429
		// every 5 s once the climb began, each a second's hold and a
		// climb back from 70%: 83% of its quota used over 36 s in the
		// kit (throttletest's SlidingLog, TestScenarioSlidingLog).
		m.rmax = m.measured
		m.plan.burst = 1
		m.setRate(m.measured)
		return true
	}
	var r float64
	switch {
	case math.IsInf(m.rate, 1) || m.rate == 0:
		// From unthrottled: what the server served, over at least a
		// second. Its burst inflates the figure; the first success after
		// the hold corrects it (recovered).
		r = 1.25 * served / max(elapsed, 1)
		m.first, m.firstAt, m.firstRefused, m.firstOK = true, m.cut, o.sent, served
		// Its window's start is the first request's only if the burst
		// went from it at a request a second or more, before any quota
		// was stated: not a client that sends now and then, nor one whose
		// first answer is a 429 (another spent the window).
		m.ladder = m.srvLimit < 0 && served >= max(1, elapsed)
	case elapsed >= 1 || served >= measureAnswers:
		// What the server served since the last cut, over that time (a
		// window server's rate, once the cuts fall once a window; a
		// bucket's refill, which the last cut emptied), at most the rate
		// in force. Not a quarter over it, as before: over 20 s runs the
		// two no-header windows drew 6.4% 429s against 8.1%. A rate that
		// was measured, not doubled in slow start, keeps at least 30%:
		// one episode cannot collapse it.
		r = min(served/elapsed, m.rate)
		if !m.slowStart {
			r = max(r, 0.3*m.rate)
		}
	case m.slowStart:
		// Too short to measure, while doubling from a guess: the guess.
		r = min(m.rmax, m.rate)
	default:
		r = m.rate // too short to measure anything
	}
	// Once a rate was measured, a 429 soon after a cut cuts that rate
	// again: a token bucket emptied by the last burst refuses the next few
	// requests at any rate above its own, and starting slow then (at a
	// request a second) threw away what was measured. Only a first answer
	// that is a 429 leaves nothing to start from.
	m.slowStart = r < slowStartRate && (m.rmax == 0 || m.slowStart)
	if m.slowStart {
		// Nothing measured: start slow and double, rather than crawl at a
		// guess.
		r = slowStartRate / decrease
	}
	m.aimd, m.rmax, m.measured = true, r, 0
	m.plan.burst = smallBurst // the pace, not bursts, finds the rate
	if o.q.RetryAfter > 0 {
		// The server times the hold: the probe at its end goes alone and
		// the pace follows it, with no burst saved up over the hold on
		// top. Four clients on Django REST framework's log (30 per 3 s)
		// each sent two at the hold's end, eight beyond their paces
		// together, and each drew a 429 2.7 s later: 8 a 12 s run, 4 with
		// this (the first bursts'), and 96% used against 89%.
		m.plan.burst = 1
	}
	m.setRate(r * decrease)
	return false
}
