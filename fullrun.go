package throttle

// Pacing faster a server that states no reset and is found full too often
// for the window it was read as (fullTooOften). Part of the server model
// (model.go): pure, no clock, no lock.

// A fullRun is this client's latest answers in a row, each to the request
// after the last's and sent once it came, that found the server full; and
// what such runs showed of the pace the server keeps up with.
type fullRun struct {
	n        int        // answers in the run
	last     float64    // the sequence number of its last
	fromSent instant    // when its first request went out
	sends    [3]instant // when the requests of the three answers before its last went out, the oldest first
	atPace   int        // answers of the run found full since it last shortened the window
	// kept is the window read before a run last shortened it (0: none
	// since the last drain): the pace it was still found full at.
	kept float64
	// Across runs: full, the shortest window read at whose pace
	// fullRunAnswers answers in a row found it full (0: none); drained,
	// the longest whose pace drained it (0: none), and back, the window
	// put back then. The pace that keeps the server full lies between.
	full, drained, back float64
}

// fullRunAnswers answers in a row found full show more than a fixed
// window's turns could, and a pace that keeps the server full
// (fullTooOften).
const fullRunAnswers = 4

// least is the shortest window a turn may read (turned, which reads none
// longer than the one in force so): the one put back when a pace drained
// the server, while that drain stands; 0 where none did. (A turn read
// after a drain as the time since the run's last answer undid the step
// back at once.)
func (f *fullRun) least() float64 {
	if f.drained > 0 {
		return f.back
	}
	return 0
}

// fullTooOften shortens the window of a server that states no reset, read
// as limit per window, once this client's answers in a row found it full
// (told the limit less its own request left) more often than windows that
// long could turn: each of those requests was counted in a window of its
// own, the second of two in one would have found one less, so k of them
// span k − 1 turns, (k − 2)·W apart at least, between the first's send and
// the last's answer. That holds for the whole run and for its last four,
// the bound while the pace climbs. A window shorter than that gives its
// limit at a faster steady rate; what is left stays the cap. A fixed
// window sent to once a window or slower is found full every time too,
// and read no shorter than it is; a bucket that refills faster than it is
// sent to stays full, and only sending faster shows its rate.
//
// The pace that drains it is past its refill. The answer that finds it
// short of full puts the window back to a safety share under the pace
// last shown to keep it full (fullRunAnswers answers at it), and from then
// on each climb, from a pace so shown, goes halfway to the pace that
// drained it: the bracket narrows on the refill from both sides.
// (Bucket4j's Remaining on a token bucket of 5 per 1 s holding 2, first
// held a default second and read as 2 per 1.007 s: paced at 1.89/s, found
// full every time and never faster, 39% used in the kit. Left at the pace
// that drained it, 5.01/s, it drew a 429 after 90 s, and the turn after it
// read a window of 85 s; put back to the pace before, a hair under its
// refill, it read 0 left for a second at a time, and then a window of
// 0.8 s.)
func (m *model) fullTooOften(o observation, prev answer, r float64) {
	f := &m.full
	switch {
	case m.stated || m.srvLimit < 2:
		*f = fullRun{}
		return
	case o.seq != prev.seq+1:
		f.n = 0 // another request of this client's between the two: no run across it
		return
	case r < m.srvLimit-1 || prev.remaining < m.srvLimit-1 || limited(o.status, o.q):
		if f.kept > 0 {
			// Drained at the pace the run climbed to.
			f.drained = max(f.drained, m.winLen)
			if f.full <= f.drained {
				f.full = 0 // kept full at a pace that now drains it: the server slowed
			}
			f.back = f.kept / safety
			if f.full > 0 {
				f.back = f.full / safety
			}
			m.winLen = max(m.winLen, f.back)
		}
		f.n, f.kept, f.atPace = 0, 0, 0
		return
	}
	if f.n == 0 || f.last != prev.seq {
		f.n, f.fromSent, f.sends, f.atPace = 1, prev.sent, [3]instant{}, 0
	}
	f.n++
	f.atPace++
	f.last = o.seq
	f.sends = [3]instant{f.sends[1], f.sends[2], prev.sent}
	// Read as windows, a window turned after prev went out, and o's
	// request is the first of its own: the window is timed from its
	// answer, and the run is no window's span.
	m.noteTurn(o, prev)
	m.winT0 = o.arrived
	if f.n < fullRunAnswers {
		return
	}
	if f.atPace >= fullRunAnswers && (f.full == 0 || m.winLen < f.full) {
		f.full = m.winLen // a pace that keeps it full
	}
	if f.full > 0 && f.drained >= f.full {
		f.drained = 0 // kept full at a pace that drained it once: the server sped up
	}
	w := min(o.arrived.sub(f.fromSent)/float64(f.n-2), o.arrived.sub(f.sends[0])/2)
	if f.drained > 0 {
		if f.atPace < fullRunAnswers {
			return // the pace in force not yet shown to keep it full
		}
		w = max(w, (f.full+f.drained)/2) // halfway to the pace that drained it
	}
	if w > 0 && w < m.winLen {
		f.kept, m.winLen, f.atPace = m.winLen, w, 0
	}
}

// noteTurn notes a turn of a server that states no reset between the
// send of prev and the answer o: two turns in a row bound a window by the
// time from the send before the first to the answer after the second.
func (m *model) noteTurn(o observation, prev answer) {
	if b := o.arrived.sub(m.turnSent); m.crossings > 0 && (m.turnBound == 0 || b < m.turnBound) {
		m.turnBound = b
	}
	m.turnSent = prev.sent
}
