package throttle

import "time"

// How a cap set from an answer that stated what is left moves on: it grows
// as a server that refills gives quota back (capGrowth), or it ends where
// the window may have ended (capEnd), and a probe goes then. Part of the
// server model (model.go): pure, no clock, no lock.

// capGrowth returns how fast, per nanosecond, a refilling server's cap
// grows from the answer o, told r left, and from when; and its end, never
// but where one probe goes first (probeTick).
func (m *model) capGrowth(o observation, r float64) (grow float64, from, end instant) {
	from, end = o.arrived, never
	// The cap grows as the server refills, at least a request per
	// MaxCooldown (a cap is a server-derived wait too); a refill of
	// no rate known yet ends as a cap that does not grow. A sliding
	// window refills no faster than its last window counted, and
	// from its clock's next tick: fiber's, sent to at the steady rate
	// by a lone client, serves 7.5 of its 10 a second, and a cap
	// grown at 9.5 from each answer drew a 429 and a whole-window
	// Retry-After in every other run. (Grown without the first
	// answer's own request, as the share counts it, Bucket4j's token
	// bucket of 10 per 1 s, read as a sliding window, drew 11% 429s in
	// the kit, and 11 more cells of its sweep fell short.)
	steady := m.steady() / float64(time.Second)
	if m.sliding() {
		steady = min(steady, m.giveBack(o.arrived, r, 0))
		from = m.nextTick(o)
	}
	grow = max(m.slideShare()*steady*m.ownShare(), 1/m.maxCooldown)
	if m.sliding() && r < 1 {
		end = m.probeTick(o, from)
	}
	if m.sliding() && m.growsAtReturns(r) {
		from = max(from, min(m.latestReturn(o), o.arrived.add(m.maxCooldown)).add(-1/grow))
	}
	if m.bucket && !m.fullAt && !m.tokens && r < 1 {
		// Nothing left, and the reset moves on with the clock: a
		// token bucket's next token, or a sliding log's next request
		// given back, which is this client's oldest request it still
		// holds, a window after its answer (sureReturn), until the
		// bucket gives back more than such a log would. Grown from
		// this answer at the rate measured, Flask-Limiter's log told
		// 10/s drew a 429 and a whole-window Retry-After in every
		// run: it had been sent nothing a window before. A client
		// alone takes the one given back then, not a request's
		// interval later (Flask-Limiter's 10 per 1 s: 102 of 120
		// served in 12 s, 106–107 so); where others share the log,
		// each waits its interval at its share, lest they keep it
		// full to the request. The next request goes within
		// MaxCooldown all the same (FuzzNeverStuck found a wait of
		// twice that).
		back := m.sureReturn(o, r)
		if m.ownShare() >= 1 {
			back = back.add(-1 / grow)
		}
		from = max(from, min(back, o.arrived.add(m.maxCooldown-1/grow)))
	}
	return grow, from, end
}

// growsAtReturns reports whether a sliding window's cap, told r left,
// grows only once this client's oldest request that the window still
// holds has come back, a window and a latency after it went, as a sliding
// log gives it back (latestReturn). Whole-second resets do not tell a log
// from a sliding counter, which gives back its last window's count evenly
// from its turn; a log gives back what it counted a window before, when it
// counted it, which after a hold or at a turn is bunched.
//   - Nothing left on a window of a second that gives back between ticks
//     (offTick). Grown at once, the kit's log of 10 per 1 s, answers up to
//     40 ms late, drew 4-5% refusals.
//   - Less than a third of the limit left, past the second turn. Four
//     clients on NestJS's log of 30 per 3 s, each growing its cap at its
//     share of the window's count spread evenly, spent the last of the log
//     at a record's turn, where it gave back 2 in its first second and 6
//     at its end, and the refusal blocked the quota for 3 s. Four clients
//     on nest, 12 s traces beside the build before: no 429 in six and 96.5
//     of 120 served, against 1.3 429s and 89; at 10 per 1 s, 0.3 and 2.3
//     (three each). The kit's log that blocks
//     (TestScenarioFourClientsOnALogThatBlocks): 0.9% refused and 78% used
//     over 60 runs, against 3.2% and 74%. Not at the first turn, where a
//     lone client's requests a window before were its first burst and a
//     counter gives back evenly all the same (the kit's httprate at every
//     phase, 30 per 3 s: 15 of 66 runs under 95% used; 82% at one phase
//     when spent out at any turn). Not with a third or more left, where the
//     cap's room, not its growth, sets what goes; grown so at any Remaining,
//     the kit's log read 1.4% refused.
func (m *model) growsAtReturns(r float64) bool {
	spentOut := r < 1 && m.offTick && m.winLen <= coarseSlack
	nearlySpent := m.crossings > 1 && r < m.srvLimit/3
	return spentOut || nearlySpent
}

// stale reports whether o, an answer in the reference's window sent after
// the reference arrived (causal), told r left, was counted before an answer
// that has since arrived, lowered the cap, and told less left than o by
// more than the server could have given back between them (low): sent
// before that answer arrived, o is then no fresher than it, and may lower
// the cap, not raise it. (A burst of 32 on throttled's GCRA bucket, told
// 10/s, spent its idle tokens at once and was answered in another order
// than counted: the answer to the first request counted, 28 left, came
// after fourteen that told 13–26 left and raised the cap back, and three
// of the burst were refused, in one table run of three.)
//
// Of the answers that lowered the cap, low is the one told least left; the
// server's rate (its limit over its window, or what it was measured to
// give back, the more of the two; before any window is read, a rate told)
// bounds what came back from when that one's request went to o's answer.
// No rate known: nothing is stale.
func (m *model) stale(o observation, r float64, causal bool) bool {
	if !causal || !m.low.ok || o.sent >= m.low.arrived { // sent after it: counted after it
		return false
	}
	rate := max(m.limitRate(), m.steady())
	if rate <= 0 {
		return false
	}
	back := rate * max(o.arrived.sub(m.low.sent), 0) / float64(time.Second)
	return r > m.low.remaining+back+1
}

// capEnd returns when a cap that does not grow ends: the latest the window
// that answered o may end, by o's reset (cut to MaxCooldown) of slack sl,
// the window's length and its first answer.
func (m *model) capEnd(o observation, sl float64) instant {
	e := o.reset
	if !o.resetOK {
		tw := m.toldWindow()
		toldEnd := m.winT0.add(min(tw, m.maxCooldown)) // the first window's end, by a rate told
		switch {
		case m.winLen > 0 && m.crossings > 0:
			return m.winT0.add(min(m.winLen, m.maxCooldown)) // a turn seen: windows start there
		case m.winLen > 0:
			return o.arrived.add(min(m.winLen, m.maxCooldown))
		case tw > 0 && toldEnd > o.arrived:
			// Told the rate, and no turn seen yet: the first window
			// ends no later than the window the rate gives the limit
			// after its first answer. (Moved on with each answer, a
			// Remaining-only fixed window of 10 per 1 s told 10/s was
			// first probed 1.9 s after its first answer, read as that
			// long, and its turn at 2 s then taken for a sliding
			// window's give-back: 63% used in the kit; 99.7%.)
			return toldEnd
		}
		if o.q.Remaining < 1 {
			return o.arrived.add(m.apart(coarseSlack)) // spent: the end is when to probe
		}
		return o.arrived.add(coarseSlack)
	}
	// The window ends in [e − slack, e + slack] for the reset e of
	// each of its answers: real servers truncate (end after e) more
	// often than they round up (end before e), and a probe too early
	// is a 429. Probe at the latest end, the soonest e + slack, and at
	// the soonest e once the server is a fixed window shown to end by
	// its resets.
	lat := o.arrived.sub(o.sent)
	end := m.winEnd // the soonest reset of the window's answers
	if (!m.onTime || m.kind == kindUnknown) && o.coarse && !m.roundedUp(o) {
		// Until then the reset may be truncated, or a sliding window's
		// turn, whose quota comes back gradually. Truncated, the
		// soonest is the answer just after a whole second ticked
		// over: less than a second before the end (fiber's first
		// window was probed up to 1.8 s late, from its last answer's
		// reset). But see roundedUp.
		end = end.add(coarseSlack)
	}
	if m.bucket && !m.refilled && !m.holdsToReset && m.winLen > coarseSlack {
		// A reset that moves on with every request is when the last
		// one is given back: a sliding log (Flask-Limiter's moving
		// window) gives back the first a window after it was counted,
		// a second sooner than that window reads from whole-second
		// resets. One probe there tells it from a server that gives
		// nothing back before its reset (gin-rate-limit), which
		// refuses it once. (Held to the reset, Flask-Limiter told its
		// rate served 76 of 120 in 12 s.) A window spent after that
		// instant is probed at its whole length after its first
		// answer, when a log has given that request back for sure:
		// held to the latest reset plus its slack, gin-rate-limit
		// paced at its steady rate was never refused, so never shown
		// to hold, and served 59–85 of 120 in 12 s. A window already
		// shortened from its reading (by a rate told, or by what the
		// log gave back: fitRead) has no second left to take off:
		// Flask-Limiter's 3 s, read as 4 and told 10/s, was probed
		// at 2 s and refused, a 429 and a whole window's Retry-After
		// in every run. Nor has a stated one, which is exact (the
		// kit's log of 30 per 3 s stating w=3, its reset when it will
		// be empty, told 10/s: probed at 2 s, refused each time).
		early := coarseSlack
		if m.winLen < m.winRead || m.stated {
			early = 0
		}
		if first := m.winT0.add(m.winLen - early + lat); first > o.arrived {
			end = min(end, first)
		} else if whole := m.winT0.add(m.winLen + lat); whole > o.arrived {
			end = min(end, whole)
		}
	}
	// A reading as long as the told window holds as told until that
	// window's end, and past it while nothing is left; otherwise it is
	// the resets' to place (a token bucket's "1" reads so, and refills as
	// it is spent: tollbooth, told 10/s, sent its whole burst at once
	// there, 5 refused).
	agrees := m.toldAgrees() && (m.winT0.add(m.winLen+lat) > o.arrived || o.q.Remaining < 1)
	told := !m.stated && (m.windowTold() || agrees)
	if m.winLen > 0 && (m.stated || told || m.crossings > 0) {
		// A window ends no later than its length after its first
		// answer (that request was counted in it), once the server,
		// a crossing or a rate told has shown where windows start
		// and how long they are. A stated length is exact, and so
		// that bound holds up to a slack before the reset: the reset
		// was rounded up (express-rate-limit's, by up to a second,
		// probed 0.2–0.9 s late at each window, which ticks from the
		// first request after the last). An inferred one may be short
		// where resets are truncated (a delta of 2.9 s reads 2): not
		// before the reset, until the windows are shown to end by
		// their resets. A length that a rate told gives the server's
		// limit, a second under what the resets read (windowTold),
		// holds from the first window on: the resets are a second
		// late, and by then a window from its first request has
		// ended, and a sliding log has given that request back.
		// (Flask-Limiter's log of 10 per 1 s, told 10/s: its reset,
		// the newest request's second plus two, held each window a
		// second or more past its end, 54 of 120 served in 12 s.) So
		// does one as long as what they read (toldAgrees), while in
		// that window or spent: fastify's "1", rounded up, held to its
		// latest end instead, served 101 of 120, and 120 bounded so.
		wEnd := m.winT0.add(m.winLen + lat)
		if m.truncates && !m.stated && !told && m.winLen <= m.winRead {
			wEnd = wEnd.add(coarseSlack) // read from truncated delays: up to a second short
		}
		if !m.stated && !told && !m.onTime {
			wEnd = max(wEnd, e.add(lat))
		}
		if told && wEnd <= o.arrived {
			// Past that window and still spent: the server is a log,
			// or its window began later than the resets showed; a log
			// gives back the oldest request of this client's that it
			// holds a window after it went, and a window begun by one
			// of this client's requests ends then too.
			wEnd = m.logReturn(o)
		}
		if told || wEnd >= e.add(lat-sl) {
			end = min(end, wEnd)
		}
	}
	return end
}

// roundedUp reports whether o's whole-second reset is taken as rounded up, its
// window's end no later than it: a delay (not an instant, an epoch's or a
// date's second, which truncates the end) on a window of a second or less, or
// on a server shown to be a fixed window, until a window counted a request
// sent at its reset (late). Servers that send a delay in whole seconds round
// it up, lest a client come back early (express-rate-limit, fastify, NestJS,
// fiber's seconds clock), and on a window of a second the slack is the whole
// window: fastify's and fiber's 10 per 1 s, each first window held to its
// latest end, a second late, and the second until a window was shown to end by
// its reset, served 103–104 of 120 in 12 s; probed at the reset, 120. On a
// server that truncates, the probe costs one 429. A longer window's first is
// held to its latest end, where the second is a fraction of it and a probe at
// the reset of a sliding counter, which gives back from there on, is refused
// and held a whole window (fiber's sliding window of 30 per 3 s: 96 of 120
// served in 12 s, 78 probed at the reset); its second is probed at its reset
// once a full refill at the first turn showed a fixed window (fastify's 20 per
// 2 s, its second window held half a second past its end: 108 of 120 in 12 s,
// 115 probed there). Nor where others share the quota: they probe the same
// end, and spend the new window on answers that have since been overtaken
// (four clients on fastify's 10 per 1 s, three traces each: 112–119 of 120
// served and 3–17 429s, against 105–109 and 1–4 held to the latest end).
func (m *model) roundedUp(o observation) bool {
	return o.delayed && !m.late && m.ownShare() >= 1 && (m.readASecond() || m.kind == kindFixed)
}

// readASecond reports whether the window was read from whole-second resets
// as a second long or less: as long as a reading's slack.
func (m *model) readASecond() bool { return m.winRead > 0 && m.winRead <= coarseSlack }
