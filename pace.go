package throttle

import (
	"math"
	"time"
)

// The server model's pace and the evidence it classifies servers by: what
// a bucket gives this client back (measureAvail), what a new window shows
// (crossed), a turn that no reset marks (turned), the rate and burst spent
// from what is left (spread), the steady rate and this client's share of
// it, whether the server refills (refills), and what a sliding window gives
// back and when (giveBack, nextTick). The window's length is window.go's,
// and so is the window a steady pace shows (fitPace).
// Part of the server model (model.go): pure, no clock, no lock.

// measureAvail measures the rate a bucket-like server's tokens come back
// at for this client: what it was told it has, plus what it took, over a
// second or more. Other clients' takings come off it, so that clients that
// share the server's bucket settle on their shares of it, and it is at
// most this client's share of the server's whole rate. Stretches in
// which the server's bucket was full (it refills no further) measure
// nothing, but a full bucket says the refill goes to waste: it lifts the
// measured rate to at least this client's share of the whole rate.
func (m *model) measureAvail(o observation, r float64) {
	ref := m.availRef
	if !ref.ok || r >= m.srvLimit-1 || ref.remaining >= m.srvLimit-1 {
		if r >= m.srvLimit-1 && m.avail > 0 {
			// Full: the refill is going to waste, whatever was measured
			// while others drained it. This client may take at least its
			// share of the whole rate.
			m.avail = max(m.avail, m.share*m.limitRate())
		}
		m.availRef = answer{ok: true, seq: o.seq, arrived: o.arrived, remaining: r}
		return
	}
	dt := o.arrived.sub(ref.arrived) / float64(time.Second)
	if dt < 1 {
		return
	}
	// Others may drain the bucket faster than it refills for a while: this
	// client keeps half of its share of the whole rate (the share learned
	// from the counts), so that no client is starved by a stretch of the
	// others' overspending.
	least := max(float64(time.Second)/m.maxCooldown, m.share/2*m.limitRate())
	back := r - ref.remaining + o.seq - ref.seq // what came back, less the others' takings
	if back >= 2 {
		// More left than this client's spending explains, by more than
		// an answer overtaken on the way: the bucket refills.
		m.refilled = true
	}
	if back >= 3+m.logReturns(ref.arrived, o) && !m.gcra.log {
		// More than a sliding log would have given back of this
		// client's requests meanwhile, by more than one counted a
		// moment off at each end of the span: tokens come back at a
		// rate. (By two, the kit's log of 30 per 3 s, paced at 8.7/s
		// told 10/s, was read as tokens in 2% of runs, and spent as a
		// bucket: 10–16 refused.) Not where its resets showed a log
		// (emptiesAsALog): its window, bounded from above by what it
		// gave back (logBound), reads a few milliseconds long, and its
		// returns a few late.
		m.tokens = true
	}
	sample := max(back/dt, least)
	if m.told() {
		// Told the rate, more back than it is a lump, not a rate: a
		// sliding log gives back what was sent a window ago, and a cap
		// grown at 12.6/s from what Flask-Limiter's moving window of 10/s
		// gave back drew a 429 and a whole-window Retry-After.
		sample = min(sample, m.ceiling)
	}
	switch {
	case m.avail == 0:
		m.avail = sample
	case r >= m.most-1 && ref.remaining >= m.most-1:
		// As full at both ends as ever seen: what it refilled beyond
		// what this client took went to waste, and that is a bound
		// under the refill, not a measure: the rate stands. (A bucket of
		// 2 refilling 5/s, one left at each answer, measured at 95% of
		// the last measure's pace: 5.1/s down to 3/s in 30 s, 79% used.)
	default:
		m.avail += (sample - m.avail) / 2
	}
	if full := m.limitRate(); m.share < 1 && full > 0 {
		// A sliding log gives back the others' requests too: while they
		// wait, more comes back than this client's spending explains, at
		// what looks like a rate, and it is theirs to spend when they
		// come back. This client gets at most its share of the whole
		// rate. (Four clients on Flask-Limiter's moving window measured
		// 14.8/s between them of its 10, spent what was left at that,
		// and drew 6–7 429s a 12 s run; none in two traces with this,
		// 0–7.4% in four loopback table runs.)
		m.avail = min(m.avail, m.share*full)
	}
	m.availRef = answer{ok: true, seq: o.seq, arrived: o.arrived, remaining: r}
}

// measureFrom reads the server as a bucket whose give-back is measured
// (measureAvail) from the answer a, if from none yet.
func (m *model) measureFrom(a answer) {
	m.bucket = true
	if !m.availRef.ok {
		m.availRef = a
	}
}

// crossed classifies the server at the first causal answer of a new window,
// sent early after the old window's reset, born full or not. A fixed window
// is shown by a full refill after a window of which a good part was used: a
// sliding window is born short then (the old window's count still weighs on
// it), and full only after an idle window or long after its turn. A window
// born short of its limit, by more than the other clients could have spent
// at their share of the steady rate since the turn (short), is a sliding
// window's once this client knows its share: countedEnough counted, or
// for a limit under that, where a window never counts it, its share seen
// (shareSeen: for a limit of five, three counted; a sliding counter of 5
// per 1 s was held to each window's end, half of it used in the kit), unless
// the server was shown to be a fixed window. (The share seen on a limit of
// ten, four clients on NestJS's log of 10 per 1 s took new windows for a
// sliding one's: 4.8–8.8 429s a 12 s run, against 2.8.)
func (m *model) crossed(full, early, short bool) {
	used := m.srvLimit - m.winLeast
	switch {
	case full && early && used >= max(2, m.srvLimit/4):
		m.kind, m.fullAt = kindFixed, false
	case !full && short && m.kind != kindFixed && (m.spentAcc >= countedEnough || m.srvLimit < countedEnough && m.shareSeen):
		m.kind = kindRefill
	}
}

// reordered is how many requests the first answer o of a new window may
// find counted before its own out of order: as many as this client had in
// flight about o (admitted while it was out, or before it and unanswered
// yet), and at least two, which also covers what others spent that no
// count has shown yet. (Two alone, a burst of eight at a turn of the kit's
// 50 per 5 s, answered out of order, read as a sliding window's: refused
// in 1–2% of runs.) On a limit under eight, once the share has been seen,
// no more than two of those in flight: none for a probe alone. (Two there,
// a lone probe one short of a full window of five said nothing, and a
// sliding counter of 5 per 1 s at a phase was held to each window's end:
// 60–69% used in the kit. On limits of ten, four clients on NestJS's log
// of 10 per 1 s drew 4.8 429s a 12 s run with it, against 3.2 without: 6
// runs each.)
func (m *model) reordered(o observation) float64 {
	inflight := o.admitted - o.seq + o.behind
	if m.srvLimit >= countedEnough || !m.shareSeen {
		return max(2, inflight)
	}
	return min(2, inflight)
}

// turned reports whether the causal answer o, told r left after the answer
// prev, shows a window's turn on a server that states no reset (Bucket4j
// states what is left, nothing else): a rise back to the limit from a
// window that had been half spent or more, or sooner than a bucket
// refilling at the limit rate could have given it back; not a bucket's
// refill. (A rise from 7 of 10 left, paced, was read as a refill, and each
// window then held to a refill of one a second: 67% used in 6 of 20 runs of
// the kit's fixed window at a phase.) The turn came after prev went out and
// before o's answer arrived. Where the answer that showed the last turn was
// to a request that opened its window (a window from the first request
// after the last one ended), the window is as long as from that answer to
// o's, at most: the guess, kept while no window is seen to last longer
// (winSpan). Where one does (a probe at the guessed end still counted in
// the old window), the windows keep to a clock the probes do not set, and a
// window is at most as long as from the send before a turn to the answer
// after the next one (or shorter, a window passed unseen between): the
// bound. (The guess alone, measured from a probe a hold put well into its
// window, read Bucket4j's headers on a fixed window of 10 per 1 s at a
// phase of the server's start as 0.2 s windows, each probed early and
// refused: 6–12% of answers 429s in the kit.)
func (m *model) turned(o observation, prev answer, r float64) bool {
	if m.srvLimit <= 0 || r+(o.seq-prev.seq) < m.srvLimit-1 || r <= prev.remaining+0.5 || m.winLeast > m.srvLimit/2 && !m.refilledPast(o, prev, r) {
		return false
	}
	m.noteTurn(o, prev)
	gap := o.arrived.sub(m.winT0)
	if !m.stated && (m.winLen == 0 || gap < m.winLen) && !m.clockTurns {
		m.winLen = max(gap, min(m.full.least(), m.winLen)) // never below the window a drain put back
	}
	if !m.stated && m.kind != kindRefill && m.turnBound > 0 && (m.clockTurns || m.winSpan >= m.winLen) {
		m.clockTurns, m.winLen = true, max(m.turnBound, m.winSpan)
	}
	// A probe at the told window's end goes a little after it.
	late := max(2*m.latency, float64(10*time.Millisecond))
	if w := m.toldWindow(); w > 0 && w < m.winLen && !m.stated && w+late >= prev.sent.sub(m.winT0) {
		// The window a rate told gives the limit, unless the server
		// showed a longer one: prev went out that long after the last
		// window's first answer, and was counted in it. (HAProxy's
		// request rate of 10 per 1 s, told 10/s, its first turn seen
		// 1.9 s after the first answer: windows of 10 per 1.9 s,
		// 54-81 of 120 served in 12 s; 95-96 with this and the first
		// window's end told, capEnd. Told 50/s, a ceiling above the
		// server's rate, Bucket4j's fixed window of 10 per 1 s read
		// 0.2 s windows and was probed early in each: 12.8% refused.)
		m.winLen = w
	}
	return true
}

// gaveBackOne reports whether the causal answer o, told r left after the
// answer prev with own of this client's requests admitted between their
// sends, shows that a server stating no reset gave back inside a window
// though what was left did not rise: o went out after prev's answer came,
// so it was counted after prev's request, and where nothing comes back it
// finds at least one less left. Finding as much shows one came back.
// (Bucket4j's bucket of 5 refilling at 10 a second, sent to at 22/s,
// counts down 3, 2, 2, 1, and its refill, with only a rise to show it,
// was read as a window's turn every 0.2 s: spent at 22/s, 12% of the
// answers were 429s.) Not a refusal, which finds nothing either way; not
// where it may be back to full, a turn (turned); and only once a window
// is known to count against (read, or given by a rate told). Not told,
// so not in the first window: read there, HAProxy's request rate of 10
// per 1 s was measured as a bucket, its first burst's answers, counted in
// any order, taken for others' spending (share 0.44): 63-71 of 120
// served in 12 s, against 71-79.
func (m *model) gaveBackOne(o observation, prev answer, r, own float64) bool {
	return m.knownWindow() > 0 && r > prev.remaining-0.5 && r+own < m.srvLimit-1 && !limited(o.status, o.q)
}

// admittedAfterNothing reports whether the causal answer o admitted its
// request where the answer prev had found nothing left: one came back, in
// prev's window or, sent before prev's reset less its slack, in a newer one
// (a bucket's reset moves on), whatever a refusal had suggested
// (holdsToReset; gin-rate-limit admits nothing before its reset). (The
// kit's log of 60 per 10 s, probed a second early and refused, was held
// from the next probe, admitted, to its reset 10 s on: 67% used.)
func admittedAfterNothing(o observation, prev answer, sameWin, newer bool, slack float64) bool {
	if o.status >= 400 || prev.remaining >= 0.5 {
		return false
	}
	return sameWin || newer && prev.resetOK && o.sent < prev.reset.add(-slack)
}

// refilledPast reports whether the causal answer o, told r left after the
// answer prev, found the server back to full, by more than a bucket
// refilling at the limit rate could have given back in between (from a
// latency before prev arrived, and one more for rounding).
func (m *model) refilledPast(o observation, prev answer, r float64) bool {
	own := o.seq - prev.seq
	if m.srvLimit <= 0 || m.winLen <= 0 || r+own < m.srvLimit-1 || r <= prev.remaining+0.5 {
		return false
	}
	gap := o.arrived.sub(prev.arrived) + m.latency
	return prev.remaining+gap*m.srvLimit/m.winLen+1 < r+own
}

// setRate plans the rate r, at least a token per MaxCooldown: pacing is a
// server-derived wait too.
func (m *model) setRate(r float64) {
	if r > 0 {
		r = max(r, float64(time.Second)/m.maxCooldown)
		m.rate, m.plan.rate = r, r
	}
}

// spread sets the rate from what is left and when more comes.
func (m *model) spread(o observation, e instant, sl float64) {
	left := m.plan.capSeq(o.arrived) - o.admitted - o.behind
	steady := m.steady()
	if m.pace == PaceBurst && m.kind != kindRefill && o.resetOK && m.srvLimit > 0 {
		// The window's quota at once: the cap alone holds the rest until
		// the window ends.
		m.plan.burst = int(min(math.Ceil(m.srvLimit), math.MaxInt32))
		m.setRate(math.Inf(1))
		return
	}
	if m.holdsToReset && !m.refilled && o.resetOK {
		// A server that gives nothing back before its reset, a reset that
		// every admitted request moves on (gin-rate-limit): what is held
		// back only puts the refill off. Spend what is left at once, as a
		// fixed window's quota with PaceBurst; the cap holds the rest to
		// the reset. (Paced at its steady rate, gin-rate-limit served 30
		// per 5 s, 60–70% of its quota; at once, 30 per 3 s.)
		m.plan.burst = int(min(math.Ceil(max(m.srvLimit, left, smallBurst)), math.MaxInt32))
		m.setRate(math.Inf(1))
		if m.told() && left >= 1 {
			// Told the rate, the gate paces at most at it, and over a
			// hold it saved up only the burst of the pace before: what
			// is left goes at once all the same, as the burst the server
			// grants. (Told 10/s, each of gin-rate-limit's windows after
			// a 429 went at 10/s, 3 s, and its refill came 3 s after
			// that: 74–75% used.)
			m.plan.spare = math.Floor(left)
		}
		return
	}
	var r float64
	blind := false // a fixed window's resets leave no time before its earliest end
	if o.resetOK && e > o.arrived && left > 0 {
		end, gaps := e, left
		if m.kind != kindRefill {
			// Spend it before the earliest end; the cap holds to the
			// latest. A whole-second reset anchored to a whole-second
			// Date may be late or early by a second each.
			end = end.add(-sl)
			if o.coarse {
				// Its last request at that end, for the latest reading
				// of it: a window spent an interval sooner is read a
				// second sooner, and a truncated reading then holds it
				// to a second later (fastify, zero config: 119 of 120
				// served, 113 so).
				end = end.add(-coarseSlack)
			} else {
				// And the next window's first request at that end, not
				// an interval after it: a window a first request opens
				// starts no later. (koa-ratelimit told 10 per 1 s, its
				// resets to the microsecond: each window spread to its
				// end and the next opened 0.11 s after it, 109 of 120
				// served.)
				gaps = left + 1
			}
		}
		blind = m.kind == kindFixed && end.sub(o.arrived) < minHorizon
		r = gaps / (max(end.sub(o.arrived), minHorizon) / float64(time.Second))
	}
	m.plan.burst = 0
	reserve := max(smallBurst, m.srvLimit/10) // a bucket's tokens kept back for reordering and others
	if m.bucket && !m.fullAt && m.share > 0.5 {
		// A reset that moves on with the clock may be a sliding log's
		// (Flask-Limiter's moving window), which gives back only what was
		// sent a window before: what is kept back is lost every window,
		// where a token bucket loses nothing by it. A client that takes
		// most of what the server counts keeps one back. (Flask-Limiter,
		// zero config: 101–104 of 120 in 12 s with three kept, 107–108
		// with one; tollbooth 127 either way.)
		reserve = 1
	}
	spare := 0.0 // a bucket's tokens beyond the reserve that this client may spend
	switch {
	case m.bucket && m.refilled && m.avail > 0:
		// A bucket's tokens left idle are lost once it is full: pace at the
		// rate they come back, and spend what it holds beyond a small
		// reserve over a second.
		// Other clients draw on the same tokens: this one spends its part,
		// the rate it gets back over the bucket's whole refill rate.
		part := 1.0
		if full := m.limitRate(); full > 0 {
			part = min(m.avail/full, 1)
		}
		spare = max(left-reserve, 0) * part
		r = safety*m.avail + spare
		if m.mayBeLog() {
			// A sliding log gives back what it counted a window before:
			// measured, the rate echoes this client's own pace of a
			// window ago, and a pace under the steady rate comes back as
			// a lower one. What the log holds is capped by what it says
			// is left, so its steady rate, at this client's share, is
			// safe. (Paced at the echo, Flask-Limiter's log served a lone
			// client 8.7/s of its 10 after the first window.)
			r = max(r, safety*m.share*m.limitRate())
		}
		m.plan.burst = smallBurst
	case m.kind == kindRefill || !o.resetOK:
		r = max(r, m.slideShare()*steady*m.ownShare())
		m.plan.burst = smallBurst
		if m.srvLimit < 2*smallBurst {
			m.plan.burst = 1 // two at once, half of it or more, say nothing of a refill (fullTooOften)
		}
		if m.bucket && m.ownShare() == 1 {
			// A bucket kept full: no refill rate to measure, and what
			// comes back beyond its capacity is lost. Spend what it holds
			// beyond the reserve over a second, as once its rate is
			// measured; told the rate, at once (below). (tollbooth,
			// started with no burst and paced at 95% of its rate, stayed
			// at 9 of 10 and used 88%; 98% with this.)
			spare = max(left-reserve, 0)
			if !m.told() {
				r += spare
			}
		}
	case m.kind == kindUnknown && steady > 0:
		// Until the server is shown to be a fixed window, its steady rate
		// with a small burst is the pace that is safe on every algorithm.
		r = safety * steady * m.share
		if end := min(e, m.winEnd); o.resetOK && o.coarse && !m.stated && !m.told() && !m.readASecond() && end > o.arrived && left > 0 {
			// And no faster than what is left lasts to the soonest
			// reset: a window's turn is seen only by a request that
			// finds it, and clients started together take more than
			// their shares at first. Spent before its end, a window
			// from the first request whose resets are rounded up is
			// held to them, opened a second late, and read a second
			// too long: four clients on express-rate-limit's legacy
			// headers, 30 per 3 s, ran windows of 4 s, 85 of 120
			// served in 12 s; 113 so. A lone client gains too: on
			// NestJS's log, 30 per 3 s, it spent the first window to
			// 0 at 2.96 s and was held to the latest end, 4 s (107
			// of 120); one left at 2.91 s, the log's give-back was
			// seen at 3.02 s (115). Only for whole-second resets, a
			// second late or early: a finer one places the end (the
			// kit's sliding window of 5 per 1 s, its resets to the
			// millisecond, spread so, 81–83% used against 89–90%).
			// A stated window ends by its length, a turn seen or not
			// (express-rate-limit's IETF headers: 107 of 120 so, 111
			// not). A reading of a second or less places no end finer
			// than its slack (tollbooth's constant "1", spread over
			// it, rose back once and was read as a sliding log's
			// give-back: 3–6 429s a run). Nor a rate told: it is the
			// server's steady rate, which spends a window no sooner
			// than it ends, where a reset rounded up reads the window
			// up to a second long (express-rate-limit's legacy
			// headers told 10/s: its first window read 3.7 s and went
			// at 7.3/s, 112–118 of 120 served; 119 at the told rate).
			r = min(r, left/(end.sub(o.arrived)/float64(time.Second)))
		}
		m.plan.burst = smallBurst
		if !m.shareSeen && !m.pooled {
			// Until the answers have shown whether others spend on this
			// quota, one at a time: clients started together each take
			// their first answer's Remaining for their own, and a burst
			// of two from each of four drew three 429s from a window of
			// 10 before any had seen the others (express-rate-limit, 10
			// per 1 s).
			m.plan.burst = 1
		}
	case blind && steady > 0:
		// The window may end at any moment, or not before its cap does
		// (a window of a second, whose whole-second resets read "1" all
		// through it). Spent at once, it leaves nothing for the other
		// clients on the quota, whose probes just after its turn are
		// refused, and who are never seen: none of their requests is
		// counted between this client's. Spent by the middle of the
		// time its cap may still run, at the steady rate at least, it
		// leaves them room, and a lone client still spends it before
		// an early end. (Four clients on express-rate-limit's 10 per
		// 1 s: the client that opened a window spent it within 10 ms,
		// and the others' probes a few milliseconds later drew 10-15
		// 429s in 12 s; 2-9 spread so. A lone client on ulule's 10 per
		// 1 s served 120 of 120 at once, 113-114 spread so, 107-108
		// spread over the whole time to the cap's end.)
		r = max(safety*steady*m.share, left/(max(m.plan.capEnd.sub(o.arrived)/2, minHorizon)/float64(time.Second)))
		m.plan.burst = smallBurst
	}
	if c := m.ceiling; m.told() && m.bucket {
		// Told the rate, the gate paces at most at it. A bucket that
		// refills at least that fast keeps it without a safety share (its
		// counts cap what goes out), and its idle tokens go at once, as
		// the burst the server grants.
		if steady >= c && m.ownShare() == 1 {
			r = max(r, c)
		}
		if spare >= 1 {
			m.plan.spare = math.Floor(spare)
			m.plan.burst = max(smallBurst, int(min(m.plan.spare, math.MaxInt32)))
		}
	}
	m.setRate(r)
}

// refusedAtPace notes a refusal of o, a probe at its cap's end (probe) if
// so. A sliding window that refuses a client alone on it, sent at its steady
// pace or under it for a window or more since any hold, counts more than
// the requests of a window: httprate rounds its weighted count and refuses
// at half a request under its limit, so that a window that counted its whole
// limit refuses the next one's first request. The pace then keeps one
// request of each window back (slideShare). (httprate's 5 per 1 s, told
// 5/s and paced at 4.75/s: windows of 4 and 5, and 1.8–6% of answers 429s.)
func (m *model) refusedAtPace(o observation, probe bool) {
	if !probe && m.sliding() && m.ownShare() >= 1 && !m.pooled &&
		o.sent.sub(m.holdEnd) >= m.winLen && m.rate <= safety*m.steady()*(1+1e-9) {
		m.overPace = true
	}
}

// slideShare is the share of a sliding window's steady rate that a client
// paces at and grows its cap by: safety, and no more than one request of
// the window short of its limit where the window was shown to refuse that
// pace (refusedAtPace). The two differ under a limit of 20.
func (m *model) slideShare() float64 {
	if m.overPace && m.srvLimit > 1 {
		return min(safety, (m.srvLimit-1)/m.srvLimit)
	}
	return safety
}

// ownShare is the share of the server's quota this client takes: 1 once
// the rate measured for a bucket-like server has the others' takings off it.
func (m *model) ownShare() float64 {
	if m.bucket && m.avail > 0 {
		return 1
	}
	return m.share
}

// told reports whether the rate was configured (Config.Limit): a finite
// ceiling, not learned and not unlimited.
func (m *model) told() bool { return m.ceiling > 0 && !math.IsInf(m.ceiling, 1) }

// steady is the server's limit per second as this client may use it, 0
// when not known: for a bucket-like server the rate its tokens come back
// at once measured, else the limit over the window, or before any window
// is read, a rate told (Config.Limit). A window inferred from whole-second
// resets may be up to a second shorter than it reads (the longest reset −
// arrival, rounded up: Flask-Limiter's Unix reset, its second plus one,
// reads a 3 s window as 4 s); a rate told between the two is the server's
// steady rate.
func (m *model) steady() float64 {
	if m.bucket && m.avail > 0 {
		return m.avail
	}
	r := m.limitRate()
	if r == 0 && m.toldWindow() > 0 {
		// Left at 0, a cap on a server that gives back and states no
		// reset did not grow: HAProxy's request rate, told 10/s and
		// found at 0 left at that pace, was held to the told window's
		// end and then sent what the queue had saved at once: 91–93 of
		// 120 served in 12 s, 111 so.
		return m.ceiling
	}
	if r == 0 {
		return 0
	}
	s := float64(time.Second)
	if !m.stated && m.winLen > coarseSlack && m.ceiling > r && m.ceiling <= m.srvLimit/((m.winLen-coarseSlack)/s) {
		r = m.ceiling
	}
	return r
}

// limitRate is the server's limit over its window, per second: its whole
// rate, all clients', 0 where either is not known.
func (m *model) limitRate() float64 {
	if m.srvLimit <= 0 || m.winLen <= 0 {
		return 0
	}
	return m.srvLimit / (m.winLen / float64(time.Second))
}

// refills reports whether the server has shown that it gives quota back
// before its reset: a sliding window's rise, or a bucket seen to refill. A
// reset that moves on with the clock does not show it alone: gin-rate-limit
// gives a key's tokens back only once its reset, a window's length after
// the key's last admitted request, has passed, so every request moves it
// on; until a refill is seen, such a server's Remaining is a cap that ends
// at its latest reset. (Grown at the floor of this client's share of a
// refill that never came, a cap drew a 429 at every 0 left, 3.1% of
// answers.)
func (m *model) refills() bool {
	return m.kind == kindRefill && (!m.bucket || m.refilled)
}

// sliding reports whether the server refills as a sliding window does,
// from what its last window counted, with its limit and window known.
func (m *model) sliding() bool {
	return m.kind == kindRefill && !m.bucket && m.srvLimit > 0 && m.winLen > 0
}

// giveBack is the rate, per nanosecond, at which a sliding window gives
// back its quota at t, r left at the latest answer: what the last window
// counted (the limit less what this window's first answer found left, less
// opened of this window's own requests that it found counted: they leave in
// the next), spread over the window. Where a steady pace showed the window
// (fitPace) and no refusal since refuted it, it is what is counted now, the
// limit less r: a server that states no reset renews no window's first
// answer, and HAProxy's frequency counter, its turn seen at 2 s with 9
// left, told 0 left at 9.2 s, grew the cap by one a second (73 of 120
// served in 12 s; 94). A token bucket sent to just under its refill keeps
// as much left as such a window would, and its first refusal refutes it
// (Bucket4j's GCRA of 5 per 1 s, read as a window of 0.61 s: 30% of answers
// 429s). Past the first window, a second read from its resets, and before
// any turn was seen, it is what that window counted (the limit less the
// least it left): it is the last one, and nothing before it was counted.
// (NestJS's log of 10 per 1 s, probed at its first reset (roundedUp), had
// given back its first request: read as a window whose first answer found 9
// left, it was taken to give back one a second, 62 of 120 served in 12 s;
// 109 with this. Not on longer windows, nor after a turn: the kit's sliding
// counter of 30 per 3 s, whose count weighs the last window's, was then
// taken to give back more than it did: 51–63% used at two phases, against
// 98–105%.) No faster than a rate told, the server's steady rate: OpenAI's
// 60 a minute, enforced by a bucket of 10 whose reset reads a second, read
// as a sliding window giving back 51 a second, and a client alone, told
// 1/s, took them for others' spending: share 0.04, 46–56% used in 6% of
// runs.
func (m *model) giveBack(t instant, r, opened float64) float64 {
	left := m.winFirst + opened
	switch {
	case m.crossings == 0 && m.readASecond() && t >= m.winT0.add(m.winLen):
		left = m.winLeast
	case m.fit.shown && !m.fit.refuted:
		left = r
	}
	back := min(m.srvLimit, max(m.srvLimit-left, 0)) / m.winLen
	if m.told() {
		back = min(back, m.ceiling/float64(time.Second))
	}
	return back
}
