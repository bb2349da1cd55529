package throttle

import (
	"math"
	"time"
)

// The ticks of a server's whole-second clock. A sliding window that reads
// its clock in whole seconds (fiber's cached timestamp) gives its quota
// back only as that clock ticks: a third of its last window a tick on 3 s,
// all of it at the next turn on 1 s, where each tick is a turn. Part of the
// server model (model.go): pure, no clock, no lock.

// tickState is what the answers showed of the ticks of a server's
// whole-second clock.
type tickState struct {
	// A tick fell in (tickLo, tickHi] (learnTick), if ticked, before the
	// request numbered tickSeq was counted.
	tickLo, tickHi instant
	tickSeq        float64
	ticked         bool
	tickFits       int  // rises that fitted the ticks seen before them
	offTick        bool // a rise fitted no tick seen: the server gives back between ticks
	// tickProbed: a probe between ticks was answered (probeTick).
	tickProbed bool
}

// noteRise places a tick if something came back between the causal
// answers prev and o, o told r left with a whole-second reset: if o found
// more left than prev, or as much once admitted, for o's own request was
// counted after prev's (it went after prev's answer came), and without a
// give-back o would have found one less. (A refusal or an error the
// server may not have counted: only a success is, as sends has it.)
func (m *model) noteRise(prev answer, o observation, r float64) {
	counted := 0.0
	if o.status < 400 {
		counted = 1
	}
	if o.coarse && r+counted > prev.remaining+0.5 {
		m.learnTick(prev, o)
	}
}

// learnTick notes that the server's clock ticked after it counted the
// request of prev and before it counted the one of o: something came back
// between the two (a rise inside a window, or a new one). Ticks a whole
// number of seconds apart narrow each other down, within tickDrift (a
// clock that a loop of one-second sleeps advances drifts). One that fits
// none of those seen shows a server that gives back between ticks
// (offTick): a refill, or a window that moves on with the clock.
func (m *model) learnTick(prev answer, o observation) {
	lo, hi := prev.sent, o.arrived
	s := float64(time.Second)
	if hi.sub(lo) >= s {
		return // a whole second or more apart: any phase fits
	}
	if m.ticked {
		// The tick seen, moved on by n seconds, meets (lo, hi] for the n
		// in ((lo − tickHi)/s, (hi − tickLo)/s): none, one, or two where
		// the spans are wide (a rise across a hold of most of a second).
		// Not by rounding the distance between the spans' ends: a span
		// of 0.9 s, 1.5 s after a narrow one, met it one second on and
		// was taken for a miss two seconds on (fiber's sliding window
		// of 10 per 1 s, after a hold: its reset moving on with the
		// clock was then read as a bucket's, two 429s more a run).
		first, last := math.Floor(lo.sub(m.tickHi)/s)+1, math.Ceil(hi.sub(m.tickLo)/s)-1
		if prev.seq == m.tickSeq {
			// prev's request was counted after the tick seen, and this
			// rise came after it: a later tick, however the spans
			// overlap. (A probe answered just after the tick, and the
			// next request's rise over it, were taken for one tick: a
			// sliding log held to ticks it does not have.) A span that
			// met two seconds before still shows nothing: it is wide.
			if first < last {
				return
			}
			first = max(first, 1)
		}
		switch {
		case first == last:
			lo, hi = max(lo, m.tickLo.add(first*s)), min(hi, m.tickHi.add(first*s))
			m.tickFits++
		case first < last:
			return // either way: it shows nothing
		default:
			// None (then first ≥ 1: answers arrive in order, so hi ≥
			// tickHi): the nearest start after hi (moved on by first)
			// or end before lo (by first − 1), within a clock's drift.
			// A clock drifts from one second to the next, not within
			// one: the tick seen itself (first − 1 = 0) fits only
			// inside its span.
			gap := m.tickLo.add(first * s).sub(hi)
			if first > 1 {
				gap = min(gap, lo.sub(m.tickHi.add((first-1)*s)))
			}
			if gap > tickDrift {
				m.offTick = true
			} else {
				m.tickFits++
			}
		}
	}
	m.tickLo, m.tickHi, m.tickSeq, m.ticked = lo, hi, o.seq, true
}

// tickDrift is how far apart two spans of a whole-second clock's ticks may
// be and still be one clock's.
const tickDrift = float64(20 * time.Millisecond)

// wholeSecondTicks reports whether what came back came back at ticks of
// the server's whole-second clock: twice at least, and never between them.
// (Once is no pattern: Nest's log of 10 per 1 s gives back its requests a
// window after each, at any phase, and taken for a whole-second clock's
// after its first rise, served 42–52 of 120 in 12 s, 62 before.)
func (m *model) wholeSecondTicks() bool { return m.tickFits > 0 && !m.offTick }

// nextTick returns when a sliding window that answered o gives back its
// next quota: at once, unless its resets are whole seconds, whose server
// may read its clock in them (fiber's cached timestamp) and then gives back
// only as a second ticks, a third of its last window at a time on 3 s. It
// ticks again within a second of reading its clock for o, whatever a reset
// far ahead (cut to MaxCooldown) says.
//
// The ticks are the window's end less whole seconds, its end placed by its
// soonest reset, late by at most the answers' spacing. A reset of n
// seconds from now was counted from the tick n before the end, so the next
// is n − 1 before it; a reset that is a date, the next whole second of the
// server's clock. Once the window's end has passed, nothing places the
// ticks: at once.
//
// Once quota came back at a phase no tick seen fits (offTick), the server
// reads a finer clock than whole seconds: at once.
//
// But a window of a second whose resets count whole seconds from now turns
// unseen at every tick, reading "1" all through: its ticks are placed by
// the quota that came back between two answers (learnTick), once it has
// come back twice at one phase, and until then as above. (fiber's sliding
// window of 10 per 1 s counts the last whole second and this one: grown
// from each answer, its cap drew a 429 and a second's Retry-After two or
// three times in 12 s, 5% of answers.)
func (m *model) nextTick(o observation) instant {
	if !o.coarse || !o.resetOK {
		return o.arrived
	}
	s := float64(time.Second)
	latest := o.arrived.add(s)
	switch {
	case m.offTick:
		return o.arrived // quota came back between ticks: no whole-second clock
	case m.unseenTurns(o) && m.wholeSecondTicks():
		return min(m.tickAfter(o.arrived), latest)
	case m.winEnd == never || m.winEnd <= o.arrived:
		return o.arrived
	}
	k := math.Floor(m.winEnd.sub(o.arrived) / s)
	if o.delayed {
		k = math.Round(o.reset.sub(o.arrived)/s) - 1
	}
	return min(max(m.winEnd.add(-s*k), o.arrived), latest)
}

// tickAfter returns the latest instant that the first tick after t may come
// at, by the ticks learned (never: none learned). A tick somewhere in
// (tickLo, tickHi] a whole number of seconds before is at most at tickHi
// plus those seconds, and after t once that is more than the span's width
// after t.
func (m *model) tickAfter(t instant) instant {
	if !m.ticked {
		return never
	}
	s := float64(time.Second)
	width := m.tickHi.sub(m.tickLo)
	n := math.Floor(t.add(width).sub(m.tickHi)/s) + 1
	return m.tickHi.add(n * s)
}

// unseenTurns reports whether the windows of the server that answered o
// may turn unseen: a window of a second whose resets count whole seconds
// from now reads "1" all through, and a sliding one (fiber's) turns at
// every tick of its clock, giving back only then. Its reset moves on with
// the clock whatever it is, and shows no bucket: not while what came back
// came back at one phase, once or more. (Taken for one, fiber's 10 per 1 s
// drew a 429 and a second's Retry-After in most runs.)
func (m *model) unseenTurns(o observation) bool {
	return o.delayed && m.winLen <= float64(time.Second) && m.ticked && !m.offTick
}

// heldToTick reports whether a window of a second whose resets count
// whole seconds from now (they read "1" all through) gave back, between
// the answers prev and o, told r left with own admitted between them, less
// than half what a bucket refilling at the server's limit rate would have
// meanwhile, less one: a sliding window whose turn went unseen gives back
// nothing until its clock's next tick, and its reset moves on with the
// clock all the same. The kit's fiber sliding window of 10 per 1 s, sent
// nothing for 0.94 s, had one left before and after, where a bucket would
// have given back nine; taken for a bucket, it drew a 429 every three
// seconds from then on (on a path where its first window was probed at its
// soonest reset), and 4 in 30 s out of order at one phase, 2 with this.
// Not for resets of other kinds: gin's, which moves on with each admitted
// request, gives nothing back before it passes and is read as a bucket
// that has not refilled yet.
func (m *model) heldToTick(o observation, prev answer, r, own float64) bool {
	perSec := m.limitRate()
	if !o.delayed || m.winLen > float64(time.Second) || perSec == 0 {
		return false
	}
	left := prev.remaining - own // once own was counted, had nothing come back
	want := min(o.arrived.sub(prev.arrived)/float64(time.Second)*perSec, max(m.srvLimit-left, 0))
	return r-left < want/2-1
}

// probeTick returns when one probe goes first (never: none), at nothing
// left on a sliding window of a second whose cap grows from from: where
// one rise has placed a tick and none has yet shown whether the
// server gives back only at its ticks (fiber's whole-second clock) or as
// each request it counted ages out (a sliding log: nest's), when a log
// would give back the oldest request of this client's that it holds, if
// its answer comes before the next tick may. Admitted, the server gave
// back between ticks (offTick), and the cap grows from each answer from
// then on; refused, no probe goes again, and the cap grows from the next
// tick as nextTick places it, until what comes back shows otherwise.
func (m *model) probeTick(o observation, from instant) instant {
	if !m.ticked || m.tickFits > 0 || m.offTick || m.tickProbed || m.winLen > coarseSlack {
		return never
	}
	back := m.latestReturn(o)
	soonest := m.tickAfter(o.arrived).add(-m.tickHi.sub(m.tickLo)) // the next tick's earliest
	// Its answer, a round trip later, must come before that tick, or a
	// tick would fit what came back.
	if back <= o.arrived || back.add(2*m.latency+tickDrift) >= min(soonest, from) {
		return never
	}
	return back
}
