package throttle

import (
	"math"
	"math/rand/v2"
	"time"
)

// The server model turns the server's answers into a plan that the gate (the
// token bucket and its queue) enforces. It is pure: it reads no clock, takes
// no lock and starts no goroutine. Every instant it sees comes in an
// observation, on the bucket's clock (an instant), so table tests can feed
// it answers and assert the plan.
//
// What it believes of a server that states its quota:
//
//   - Pace at the server's steady rate (its limit over its window, at 95%,
//     with a small burst) until the server is shown to be a fixed window:
//     that pace is safe on every algorithm. A fixed window's quota is then
//     spent before the window's earliest end, or, where the resets leave
//     no time before it, over half the time to the cap's end.
//   - Remaining is a cap, not a rate. The request with sequence number s
//     that was told Remaining r says that no request beyond s + r may go out
//     before the window ends: the requests sent before it were counted, those
//     admitted after it were not. The cap is replaced by an answer to a
//     request admitted after the cap's own answer arrived (causal evidence),
//     and only lowered by the others (they may be stale or reordered), until
//     nothing is in flight: then a window that does not refill has its least
//     Remaining left after the last request admitted.
//   - Resets are uncertain. Whole-second resets may be truncated, rounded or
//     rounded up, and a delta is measured from an arrival that is late by the
//     latency: the window ends somewhere in [reset − slack, reset + slack]
//     for each of its answers, so by the soonest reset plus the slack. A
//     spent cap holds to that latest end (to the soonest reset itself once
//     the server is a fixed window shown to end by its resets: a new window
//     answered before the old one's reset), and no later than a stated
//     window's length after its first answer; then one probe goes alone and
//     its answer sizes the next window.
//   - Refilling servers show it. A sliding window: a later request is told
//     more than an earlier one within one window, or a window is born short
//     of its limit; its cap grows at a safe share of the steady rate instead
//     of ending. Its windows follow one another, so the jump between two
//     windows' resets is its length, and its quota comes back from a
//     refusal on: a lone client's first refusal is retried once two
//     requests' worth has come back, not at the reset. A bucket (GCRA,
//     token buckets): the reset moves before the old one could have
//     passed, or moves on with the clock; its steady rate is measured from
//     what it says is left and what this client took. One whose reset moves
//     on with the clock may be a sliding log, which gives back what it
//     counted a window before: until it gives back more than that, it is
//     paced at its steady rate, its window placed by what it gave back.
//   - Other clients on the same quota (processes, tabs) show up as Remaining
//     falling faster than this client spends, or as a refusal with room
//     left. The model estimates its share of the spending and scales what
//     it takes by it, so that N uncoordinated clients keep inside one
//     quota. Processes on a Store take no share: the store counts them all.
//
// A server that states nothing is probed (probing.go): one request at a time
// until it refuses one, then a 429 cuts the rate multiplicatively and the rate
// grows back along a cubic curve (TCP CUBIC).

// Server kinds, as far as the answers have shown.
const (
	kindUnknown = iota
	kindFixed   // a full refill seen at a reset, no rise inside a window
	kindRefill  // a rise inside a window, or a reset that moves (GCRA)
)

// model is the server model's state. A Bucket embeds it; Bucket.mu guards
// its fields, but its methods read no clock and touch nothing outside it.
type model struct {
	maxCooldown float64 // nanoseconds
	pace        Pace
	ceiling     float64 // Config.Limit in tokens/s: 0 when learned, +Inf for no local limit
	answered    bool    // an answer has been observed
	answers     uint64  // answers observed
	latency     float64 // the answers' latency, smoothed (ns): a moving mean, 0 before one

	srvLimit float64 // the server's limit per window; <= 0: not known
	most     float64 // the most Remaining seen, plus its request: a bucket holds at least that
	winLen   float64 // the server's window in ns; 0: not known
	stated   bool    // winLen was stated (IETF w, a policy), not inferred
	kind     int
	fullAt   bool     // resets say when the server's bucket is full again
	gcra     fullRead // the reading with the most left, and whether a log was shown (emptiesAsALog)
	// bucket: Remaining is a token count that refills continuously (GCRA,
	// token buckets): resets that say when it is full, or a reset that
	// moves on with the clock instead of marking a window's end.
	bucket bool
	// refilled: the bucket was seen to refill, more left than this
	// client's spending explains. A reset that moves on with the clock does
	// not show it alone: gin-rate-limit's moves on with every request, and
	// gives nothing back until it has passed (see refills).
	refilled bool
	// tokens: such a bucket gave back more, over a second, than a sliding
	// log would have of this client's requests: it refills at a rate.
	tokens bool
	// holdsToReset: such a bucket refused a probe at (or a second short
	// of) its window's length after its first answer: it gives nothing
	// back before its reset, and its windows are spent at once (spread),
	// unless it is seen to refill after all (admittedAfterNothing).
	holdsToReset bool
	// logWin bounds the window of such a bucket that has not shown that
	// it refills at a rate, as a sliding log's (Flask-Limiter's moving
	// window) would hold it, from what it gave back of this client's
	// requests (logBound; ns, 0: none).
	logWin float64
	// winRead, fineRead: the longest window read from whole-second resets,
	// rounded up (learnWindow), and from finer ones; jump: the least jump
	// between two windows' whole-second resets that are instants: see
	// fitRead.
	winRead, fineRead, jump float64
	// avail is the rate a bucket-like server's tokens come back at for this
	// client: its refill less what other clients take, measured from
	// answers a second or more apart (tokens/s; 0: not measured yet).
	avail    float64
	availRef answer
	// winE0, winT0: the reset and arrival of the current window's first
	// answer, to tell a reset that marks an end from one that moves on.
	// winE0OK: that answer stated a reset; winE0Coarse: in whole seconds;
	// winFine: a finer reset of the window has since placed its end.
	winE0, winT0                  instant
	winE0OK, winE0Coarse, winFine bool
	crossings                     int // new windows seen by causal answers
	// Turns of a server that states no reset (turned): the last came after
	// turnSent; turnBound is the least time two turns bounded a window by
	// (ns, 0: none); winSpan is the longest a window not shown to refill
	// counted requests for, from its first answer; clockTurns: one lasted
	// longer than a window that the last turn's answer opened would have.
	turnSent           instant
	turnBound, winSpan float64
	clockTurns         bool
	full               fullRun // this client's latest answers in a row that found the server full (fullTooOften)
	share              float64
	// pooled: the processes on this quota share one bucket through a
	// Store, which counts what all of them admit. The others' spending
	// is then no reason for this process to take a share: the store's
	// tokens and rate are the whole quota's, and a share would scale
	// them down for every process at once.
	pooled   bool
	ownAcc   float64 // own spending over causal pairs, decayed per window
	spentAcc float64 // the server's spending over the same pairs
	pair     pairEnd // the last counted pair's later answer, for the requests that overtook it (countOvertaken)
	// shareSeen: enough has been counted once to tell this client's share
	// of the spending (updateShare).
	shareSeen bool

	// ref is the answer the cap was last set from: the reference for causal
	// comparisons. ref.ok false: none yet.
	ref  answer
	low  answer // of the answers since ref that lowered its cap, the one told least left (stale)
	plan plan

	// No quota headers: the rate is found by probing.
	aimd      bool    // probing: the server sends no quota
	discover  int     // no quota stated, no 429 yet: answers while requests go one at a time
	rate      float64 // the rate the model set last, tokens/s (+Inf: none)
	rmax      float64 // the rate that drew the last 429, tokens per second
	slowStart bool    // rmax is a guess, not measured: double instead of curving
	// first: the first 429 came from unthrottled, and nothing succeeded
	// since; firstOK requests succeeded from firstAt up to it, a request a
	// second or more if ladder (its hold is firstProbe's), and the
	// request sent at firstRefused was the first refused.
	first, ladder         bool
	firstAt, firstRefused instant
	firstOK               float64
	backoffs              int     // cooldowns in a row that the server gave no end for
	cutOpen               bool    // cut since the last success: another 429 backs off but does not cut
	cut                   instant // when the rate was last cut or set free, or the first hold's probe succeeded; a 429 for a request sent before it is of the same episode
	ok                    float64 // answers that were not refusals
	okAtCut               float64 // ok when cut was set
	holdEnd               instant // the end of the last hold the model planned
	plateau               instant // when the curve last took its plateau (t = k there)
	okAtPlateau           float64 // ok then
	// retriedEarly: the last refusal, from a sliding window, was retried
	// before the end it was given (cooldown); a success clears it.
	retriedEarly bool
	// toldShort: a probe at the end of the window a told rate gives the
	// server's limit was refused: the rate told is above the server's, or
	// the server slides; the window's end is left to the resets
	// (refusedAtToldEnd).
	toldShort bool
	overPace  bool // a sliding window refused its steady pace (refusedAtPace)
	// notLog: alone on the server, this client was given back more than a
	// sliding log holding its requests for a window would have: whatever
	// else the server is, no such log (weighLog).
	notLog bool
	// heldAsTold: the last hold ended when the server said (Retry-After),
	// not when a backoff guessed or a reset was read.
	heldAsTold bool
	// The length at which the first hold of a server that states nothing
	// found its window's end (ns; 0: none), the request that began the
	// window in force, and ok before it: the window ends at cycleEnd.
	cycle, okAtCycle float64
	cycleStart       instant
	// measured is what the server served over a first hold whose end it
	// gave, at a safety share: its quota over its window, as a told rate
	// would be (tokens/s; 0: none, or cut since). The curve keeps to it
	// for measuredRequests (cubic), and comes back to it when climbing
	// past it draws a 429.
	measured float64
	// onTime: a new window answered before the old one's reset, and no
	// answer since from the old window after it: windows end by their
	// resets, and a probe may go at the reset rather than at its latest end.
	// late: a window counted or refused a request sent at or after its end:
	// its delta resets are held to their latest end too (roundedUp).
	onTime, late bool
	// truncates: a request sent after a delay of 0 s was counted in its
	// window: a window read from the delays is up to a second short.
	truncates bool
	delays    int     // whole-second resets read as delays, less those read as instants
	winLeast  float64 // the least Remaining the current window has reported
	winFirst  float64 // the Remaining of the current window's first answer
	// winEnd is the soonest reset, plus its answer's latency, that the
	// current window's answers stated (never: none). Each answer places
	// the window's end within a slack of its own reset; the window's end is
	// in all of those spans, so the soonest bounds the latest end.
	winEnd    instant
	tickState         // what the answers showed of the server's clock (ticks.go)
	fit       paceFit // what a steady pace left, for the window (fitPace)
	sends     sendLog // the send instants of the latest requests the server counted
	jitter    rand.PCG
}

func newModel(maxCooldown float64, pace Pace, ceiling float64) model {
	m := model{maxCooldown: maxCooldown, pace: pace, ceiling: ceiling, share: 1, srvLimit: -1}
	m.rate = ceiling
	if ceiling == 0 {
		m.rate = math.Inf(1)
	}
	return m
}

// observe folds one answer into the model and returns the plan.
func (m *model) observe(o observation) plan {
	probe := m.plan.capOn && m.plan.capEnd != never && o.sent >= m.plan.capEnd // sent at the cap's end
	toldEnd := m.winT0.add(m.knownWindow())                                    // of the window as it was
	m.plan.holdOn, m.plan.spare = false, 0                                     // each answer's own
	q := o.q
	quota := q.Remaining >= 0 || q.Limit >= 0
	if !m.answered && !quota {
		m.free(o.sent) // no quota stated: one at a time, with no rate, until a 429
	}
	m.answered = true
	m.answers++
	if l := o.arrived.sub(o.sent); l >= 0 {
		if m.latency == 0 {
			m.latency = l
		}
		m.latency += (l - m.latency) / 8
	}
	if q.Limit > 0 {
		m.srvLimit = q.Limit
	} else if q.Limit < 0 && q.Remaining >= 0 && m.srvLimit <= q.Remaining {
		// A server that states what is left but not its limit (Bucket4j)
		// has at least one more than the most it ever said was left: the
		// answered request was counted.
		m.srvLimit = q.Remaining + 1
	}
	if q.Window > 0 {
		m.winLen, m.stated = float64(q.Window), true
	}
	if o.status < 400 {
		m.sends.add(o.sent, o.arrived) // counted by the server
	}
	m.tickProbed = m.tickProbed || probe && m.plan.tickProbe // whatever it found: one probe
	switch {
	case q.Remaining >= 0:
		m.aimd, m.first, m.cycle = false, false, 0
		m.remaining(o)
	case q.Limit > 0 && m.winLen > 0:
		// A limit and a window but no count: pace at the steady rate.
		m.aimd, m.first, m.cycle = false, false, 0
		m.setRate(safety * m.steady() * m.share)
	}
	if o.status < 400 {
		m.ok++
		m.rollCycle(o.sent)
	}
	if m.plan.alone {
		// A server that states nothing: requests go one at a time until it
		// refuses one (its burst is then known, and one request too many
		// was sent, not a flight of them) or has taken enough for a rate.
		m.discover++
		m.plan.alone = m.discover < discoverAnswers && !limited(o.status, q) && q.Remaining < 0
		if !m.plan.alone && m.discover == discoverAnswers && !limited(o.status, q) && !quota {
			m.discovered(o.arrived)
		}
	}
	if limited(o.status, q) {
		m.late = m.late || probe // the window had not ended at its cap's end (roundedUp)
		m.holdsToReset = m.holdsToReset || m.bucket && !m.refilled
		m.refusedAtToldEnd(o, probe, toldEnd)
		m.refusedAtPace(o, probe)
		m.refuteLogBound()
		m.cooldown(o, probe)
	} else if o.status < 400 && m.aimd {
		if m.first && o.sent >= m.cut {
			// Sent after the first 429 came: not an answer in flight
			// from before it.
			m.recovered(o.sent, o.arrived)
		}
		m.backoffs, m.retriedEarly = 0, false
		// The probe after a hold does not end the episode alone: a 429
		// right after it says the server had room for just the probe, not
		// that the rate is too high (echo's bucket after a hold, or a
		// sliding counter's old count), so it backs off again, uncut.
		m.cutOpen = m.cutOpen && m.ok-m.okAtCut < 2
		r := m.cubic(o.arrived)
		if m.told() {
			// Told the rate, and refused at it (probing starts at a
			// 429): that rate is the server's edge, where a
			// millisecond's jitter is a refusal (a sliding log sent to
			// at exactly its rate). The curve stays a safety share
			// under it. (Django REST framework's log of 30 per 3 s,
			// told 10/s: a 429 and a second's Retry-After each time
			// the curve came back to 10/s, 2 a run, 80% used.)
			r = min(r, safety*m.ceiling)
		}
		m.setRate(r)
	} else if o.status < 400 {
		m.backoffs, m.cutOpen, m.retriedEarly = 0, false, false
		if !quota && m.told() {
			m.nearEdge(o.arrived)
		}
	}
	m.plan.flights = m.startFlights(q.Remaining >= 0)
	m.plan.paceFirst, m.plan.firstSent = m.firstPace(o), o.sent
	return m.plan
}

// remaining folds an answer that states the remaining count.
func (m *model) remaining(o observation) {
	m.learnWindow(o) // from the reset as stated: it is the window's length, not a wait
	r, e, eOK := o.q.Remaining, o.reset, o.resetOK
	if eOK {
		e = min(e, o.arrived.add(m.maxCooldown)) // a reset far ahead waits no longer than MaxCooldown
		o.reset = e
	}
	prev := m.ref
	sl, psl := slack(o), pairSlack(o, prev.resetOK && prev.coarse) // o's reset's, and against prev's
	if prev.ok {
		psl += max(prev.arrived.sub(prev.sent), 0) // prev's reset is as late as its latency (pairSlack)
	}
	hasRef := prev.ok
	// Causal: admitted after the reference answer arrived. Sequence numbers
	// tell it exactly where two readings of a clock may tie.
	causal := hasRef && o.seq > prev.admitted
	// A delay of 0 s: the window ends within the second (truncated), or
	// has ended (rounded up). A request sent after it and counted in the
	// same window shows it truncated, and windows may last a second past
	// their resets (each "0" read as a new window, windows of 2 s: 75%
	// used). Not an epoch's second read within a millisecond of a whole one.
	switch {
	case eOK && o.delayed:
		m.delays++
	case eOK && o.coarse:
		m.delays--
	}
	zero := eOK && o.delayed && m.delays > 0 && e.sub(o.arrived) < coarseSlack/2
	if causal && prev.zero && r < prev.remaining {
		m.truncates, m.late = true, true
	}
	tol := max(psl, float64(10*time.Millisecond))
	both := hasRef && eOK && prev.resetOK
	// A later reset is a new window when it is far enough from the old one,
	// or when the request went out after the old one had passed (by its
	// reset, or by a length after its first answer, stated or shown to
	// end by the resets it was read from): windows of a second or two
	// cannot be told apart by whole-second resets alone.
	passed := prev.reset
	if m.truncates && prev.zero {
		passed = passed.add(coarseSlack)
	}
	if (m.stated || m.onTime) && m.winLen > 0 && hasRef {
		passed = min(passed, m.winT0.add(m.winLen))
	}
	noResets := hasRef && !eOK && !prev.resetOK
	turned := noResets && causal && m.turned(o, prev, r)
	newer := both && (e.sub(prev.reset) > tol || o.sent >= passed && e.sub(prev.reset) > float64(time.Millisecond)) || turned
	older := both && prev.reset.sub(e) > tol
	sameWin := noResets && !turned || both && !newer && !older
	// Back to full, sooner than the server could have refilled at its
	// limit rate since the last answer: a new window whose resets did
	// not tell it from the old one. Whole-second resets on a window of a
	// second read the same all through it, and a server that reads its
	// clock in whole seconds ends a window at the next tick after its
	// first request, up to a second short of what its reset said
	// (fiber's 10 per 1 s, read as a refill: 59% used). Not so on a
	// server shown to give back before its reset, or to move its reset on
	// with the clock: a sliding log gives back at once a burst it
	// counted a window before.
	risen := causal && sameWin && both && m.kind != kindRefill && !m.bucket && m.refilledPast(o, prev, r)
	if risen {
		newer, sameWin = true, false
	}

	if causal {
		own := o.seq - prev.seq // admitted between the two sends: counted between the two answers
		switch {
		case sameWin && (r > prev.remaining+0.5 || noResets && m.gaveBackOne(o, prev, r, own)):
			// More left for a later request, inside one window, or as
			// much where no reset is stated (gaveBackOne). (Not
			// "more than the earlier count less what was sent between":
			// requests admitted in one order may reach the server in
			// another.)
			m.kind, m.refilled = kindRefill, true
			if !eOK && m.winLen == 0 {
				// No reset and no window to count a turn by: a count that
				// comes back as time passes, at a rate to measure as a
				// bucket's (Bucket4j states nothing else), from the
				// answer before the rise on.
				m.measureFrom(prev)
			}
		case sameWin && eOK && m.winE0OK && e.sub(m.winE0) > 3*pairSlack(o, m.winE0Coarse)/2 && o.arrived.sub(m.winT0) > 3*sl/2 && !m.unseenTurns(o) && !m.heldToTick(o, prev, r, own):
			// One window by every pair of answers, and yet its reset has
			// moved on with the clock: a delay until the bucket refills
			// (tollbooth's "1", GCRA at its equilibrium), not an end.
			m.kind, m.bucket = kindRefill, true
		case risen:
			m.crossed(true, true, false)
		case older && prev.reset.sub(o.sent) > psl:
			m.kind = kindRefill // the reset came closer before the old one passed
		case newer && prev.reset.sub(o.arrived) > psl && !m.mayBeLog() && !m.gcra.log:
			// A new reset before the old one could have passed: the reset
			// is when the server's bucket is full again (GCRA). Not so
			// where the server gives back as a sliding log does, or was
			// shown to be one: each request moves its reset on, whose
			// whole second may read a second late (Flask-Limiter's, its
			// second plus one, after a pause: read as GCRA in half the
			// runs told its rate, each a 429 and a whole window's wait).
			m.kind, m.fullAt, m.bucket = kindRefill, true, true
		case newer && m.srvLimit > 0:
			full := r+own >= m.srvLimit-1
			if m.winLen > 0 {
				// A bucket refills too, at Limit per window: a full one
				// shows a window only if it could not have refilled since
				// the last answer.
				gap := o.arrived.sub(prev.arrived) + m.latency
				full = full && prev.remaining+gap*m.srvLimit/m.winLen < m.srvLimit-1
			}
			// Born short by more than the others could have spent since
			// the turn: a sliding window's old count. They spend at their
			// share of the steady rate (twice over), or all of their share
			// of a fixed window's quota at once; and what was counted
			// out of order (reordered).
			others := m.othersShare()*max(2*m.steady()*max(o.arrived.sub(prev.reset), 0)/float64(time.Second), m.srvLimit) + m.reordered(o)
			short := m.srvLimit - 1 - (r + own)
			// Early in the new window: soon after the old one's reset,
			// or, where none is stated, back to full sooner than a
			// bucket could have refilled.
			early := m.winLen > 0 && o.sent.sub(prev.reset) < m.winLen/2
			if noResets {
				early = m.refilledPast(o, prev, r)
			}
			m.crossed(full, early, short > others)
		}
		m.refilled = m.refilled || m.bucket && admittedAfterNothing(o, prev, sameWin, newer, psl)
		if sameWin && m.kind == kindRefill && !m.bucket && m.weighLog(o, prev, r, own) {
			// A rise inside a window by a lump that a sliding log gives
			// back and a sliding counter does not: a log, whose
			// give-back is measured as a bucket's.
			m.refilled = true
			m.measureFrom(prev)
		}
		if eOK && (sameWin || newer) {
			m.noteRise(prev, o, r)
		}
		if noResets && sameWin {
			m.fitPace(o, r)
			m.fullTooOften(o, prev, r)
		}
		m.countShare(o, prev, r, own, sameWin, newer)
	}
	if m.bucket && causal {
		m.measureAvail(o, r)
	} else if newer && causal && m.kind == kindRefill && !o.delayed {
		m.learnCadence(e.sub(prev.reset), psl)
	}
	if newer && causal && both && o.coarse && prev.coarse && !o.delayed && !m.bucket {
		m.noteJump(e.sub(prev.reset), e <= o.arrived)
	}
	if m.mayBeLog() && !m.stated && o.status < 400 {
		m.logBound(o, r)
	}
	switch {
	case newer && causal:
		m.crossings++
		fallthrough
	case !hasRef, newer:
		m.winLeast, m.winFirst, m.winE0, m.winE0OK, m.winE0Coarse, m.winFine, m.winT0, m.winEnd = r, r, e, eOK, o.coarse, false, o.arrived, never
		m.pair = pairEnd{}
	case sameWin:
		m.winLeast = min(m.winLeast, r)
		if m.kind != kindRefill {
			m.winSpan = max(m.winSpan, o.sent.sub(m.winT0))
			if eOK && o.coarse && !o.delayed {
				m.spanned()
			}
		}
		if !causal {
			m.countOvertaken(o, r)
		}
	}
	switch end := e.add(o.arrived.sub(o.sent)); {
	case !eOK || older, o.coarse && m.winFine: // a whole second places no end a finer reset placed
	case m.bucket && !m.refilled, m.winE0Coarse && !o.coarse && !m.winFine:
		// A reset that moves on with the clock: the latest is the end.
		// The window's first finer reset places it, over a whole second.
		m.winEnd, m.winFine = end, m.winE0Coarse && !o.coarse
	default:
		m.winEnd = min(m.winEnd, end)
	}

	// The cap.
	p := &m.plan
	switch {
	case sameWin && both && o.sent > prev.reset, p.capOn && o.sent >= p.capEnd && sameWin && (r < 1 || limited(o.status, o.q)):
		// Sent after the window's reset, or probing at its end, and still
		// counted in it: this server's windows end after their resets (it
		// truncates them).
		m.onTime, m.late = false, true
	case newer && causal && both && (o.arrived < prev.reset || o.delayed && !m.truncates && o.arrived.sub(prev.reset) < 2*o.arrived.sub(o.sent)+float64(10*time.Millisecond) && r+(o.seq-prev.seq) >= m.srvLimit-1):
		// Answered from a new window before the old one's reset: this
		// server's windows end by their resets (it rounds them up, or
		// states them exactly). Or just after it, a probe sent at it,
		// where resets are whole seconds from each answer's arrival: had
		// they been truncated, the old window would have ended within the
		// few milliseconds between its last reset and this answer, and
		// where in the second after that reset it ends is set by when
		// the answer came, not by the window: about one chance in a
		// hundred on loopback, and a probe refused at a reset then says
		// so (above). (Until one came before the reset, no window of
		// fastify's 5 per 1 s was shown to end by its reset, each was
		// held to the last answer's, half a window late: 37 of 60 served
		// in 12 s.) Not so an instant's truncated reset, a whole second
		// of the server's clock (a window opened at it ends just after the
		// next: ulule's 5 per 1 s, three 429s a run), nor delays shown to
		// truncate (the kit's 50 per 5 s at a phase: 8% of runs refused).
		m.onTime = true
	}
	// Nothing of this client's in flight: the server has counted every
	// request it admitted, and a window that does not refill has the least
	// Remaining it reported left, whatever order the answers came in. That
	// is the cap, as if the last request admitted had been told it. An
	// answer overtaken on the way (told more spent than its own number
	// shows) lowered the cap below it: a burst of 20 answered out of order
	// left 10 of ulule's 30 unspent for the rest of the window, in one run
	// of eight.
	settled := sameWin && !causal && o.inflight == 0 && !m.refills()
	seq := o.seq
	if settled {
		seq, r = o.admitted, m.winLeast
	}
	allowed := seq + r
	if sh := m.ownShare(); sh < 1 {
		// This client's share of what is left, rounded at random so that
		// clients that each hold less than one still spend it between them.
		// The roundings of the 1/sh clients add up to a spread of about
		// √(1/sh): that much of what is left stays unspent, so that the
		// last requests of a window do not race. Twice that where the
		// window does not refill: each client spends on an answer the
		// others have since overtaken, and a window's last request
		// refused stays refused until it ends (four clients on
		// express-rate-limit, 6 s: 1.6% 429s and 98% used, against 0–0.6%
		// and 94–96%; on a sliding window twice cost a third of its use).
		spread := math.Sqrt(1 / sh)
		if !m.refills() {
			spread *= 2
		}
		allowed = seq + math.Floor(sh*max(r-spread, 0)+m.uniform())
	}
	grow, growFrom, end := 0.0, o.arrived, never
	if m.refills() && m.steady() > 0 {
		grow, growFrom, end = m.capGrowth(o, r) // an end: a probe between ticks
	} else {
		end = m.capEnd(o, sl)
	}
	switch {
	case (!hasRef || causal || newer || settled || !p.capOn || o.arrived >= p.capEnd) && !m.stale(o, r, causal && sameWin):
		*p = plan{rate: p.rate, burst: p.burst, alone: p.alone, capOn: true, capBase: allowed, capAt: growFrom, capGrow: grow, capEnd: end, capRef: seq,
			tickProbe: grow > 0 && end != never}
		m.ref = answer{ok: true, seq: seq, sent: o.sent, arrived: o.arrived, remaining: r, reset: e, resetOK: eOK, coarse: o.coarse, zero: zero, admitted: o.admitted}
		m.low = answer{}
	case older:
		return // an answer from an older window says nothing of this one
	default:
		// Same window, not causal (or stale): it may lower the cap, never
		// raise it.
		if allowed < p.capSeq(o.arrived) {
			p.capBase, p.capAt, p.capRef = allowed, growFrom, o.seq
			if !m.low.ok || r < m.low.remaining {
				m.low = answer{ok: true, sent: o.sent, arrived: o.arrived, remaining: r}
			}
		}
	}
	m.spread(o, e, sl)
}
