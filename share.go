package throttle

import "time"

// countShare folds the causal pair prev → o (o told r left, own of this
// client's requests admitted between the two sends) into the estimate of
// this client's share of what the server counts: what it sent against what
// the server counted, the server's refill added back, summed over a chain
// of pairs and decayed at each new window. Part of the server model
// (model.go): pure, no clock, no lock.
func (m *model) countShare(o observation, prev answer, r, own float64, sameWin, newer bool) {
	if m.pair.seq == prev.seq {
		// The requests credited to the last pair are in this one's own,
		// counted before its first answer: not twice.
		own -= m.pair.credited
	}
	m.pair = pairEnd{}
	outran := false // refused with room left: see updateShare
	if limited(o.status, o.q) && !m.refills() {
		// A refused request took nothing of what the pair's first answer
		// said was left, on a window that gives nothing back: where
		// that was room enough for it, the others had taken it.
		// (Counted as this client's own, a client that the others
		// outran at each window's turn, its first answer told 1 left
		// and the next refused, saw them spend nothing, kept its share
		// at 1 and sent into a spent window every second: four clients
		// on express-rate-limit's 5 per 1 s, 14.8 429s in 12 s; 3 with
		// this and a refused probe's spread (cooldown).) Not where the
		// server refills: a sliding counter that rounds its count
		// refuses a lone client some of what it gave back (the kit's
		// httprate of 5 per 1 s, read as half another's: 50% used).
		n := max(o.cost, 1)
		own = max(own-n, 0)
		outran = sameWin && prev.remaining >= own+n
	}
	switch {
	case m.sliding() && (sameWin || newer && o.arrived.sub(prev.arrived) < m.winLen):
		// A sliding window gives back what its last window counted,
		// spread over this one: not the limit rate, but what this
		// window's first answer showed missing. Credited at the whole
		// rate, a lone client that had sent half of it took the other
		// half for the others' spending, paced at its share, and so got
		// back less again (share 1 → 0.51 in 30 s at 5/s in the kit;
		// fiber's sliding window, 0.39). Rises count too: they are
		// the give-back. The first answer's own request is this
		// window's, not the last one's: taken for the last one's, a
		// lone client sent to a window one less than it was credited
		// with, and read its share as its pace over that pace plus
		// one (the kit's sliding counters of 5 per 1 s: 0.75–0.85,
		// paced at 3.5/s, 64–67% used at a phase).
		if newer {
			m.ownAcc, m.spentAcc = m.ownAcc/2, m.spentAcc/2
		}
		refill := m.giveBack(o.arrived, prev.remaining, 1) * o.arrived.sub(prev.arrived)
		m.ownAcc += own
		m.spentAcc = max(m.spentAcc+prev.remaining-r+refill, 0)
	case sameWin && (r <= prev.remaining-0.5 || m.refills() && r <= prev.remaining+0.5):
		// What the server counted between the two answers, against
		// what this client sent between them. A pair alone is off by
		// the requests that overtook each other on the way; summed
		// over a chain of pairs those errors cancel. A refilling
		// server adds back what it refilled meanwhile, at its whole
		// rate: counted as spent, or the others' spending would show
		// less than it is and this client's share more.
		//
		// Where the server is not known to give back, a pair whose
		// later answer found as much left is left out: o went out after
		// prev's answer came, so the server counted o between the two,
		// and finding no less, it gave back or turned unseen in between
		// by as much as it counted. Such a pair tells nothing of what
		// the others spent. A refused o, whose pair finds nothing left
		// after nothing, is left out with it: it took nothing (above).
		// (Counted as this client's request against nothing spent,
		// four clients on tollbooth's token bucket, whose reset reads 1
		// throughout, each read as a window of a second, took such
		// pairs for a share of 1: one paced at the whole rate, and the
		// others' probes were refused.)
		refill := 0.0
		if perSec := m.limitRate(); m.refills() && perSec > 0 {
			if !m.stated && m.ceiling > 0 {
				// A window inferred from resets is the longest seen
				// yet, so its refill is at most this. A rate told
				// is the server's steady rate: the refill, however
				// short a "seconds until full" reset made the window
				// look (throttled's "1" near full).
				perSec = min(perSec, m.ceiling)
			}
			refill = perSec * o.arrived.sub(prev.arrived) / float64(time.Second)
			if m.mayBeLog() {
				// A sliding log gives back what it counted a window
				// before, not at its rate: this client's own
				// requests, known, and the others' (othersReturned).
				// (At the whole rate, a lone client that had sent
				// less a window before took the difference for
				// others' spending: share 0.84 on Flask-Limiter's
				// log, and a 429.)
				refill = m.logReturns(prev.arrived, o) + m.othersReturned(prev, o, refill)
			}
		}
		spent := max(prev.remaining-r+refill, 0)
		m.ownAcc += own
		m.spentAcc += spent
		m.pair = pairEnd{seq: o.seq, admitted: o.admitted, remaining: r, from: prev.remaining, room: spent - own}
	case newer && !m.bucket:
		// A new window: decay what the last ones said of the share.
		// (A bucket's reset moves on without one.)
		m.ownAcc, m.spentAcc = m.ownAcc/2, m.spentAcc/2
	}
	m.updateShare(outran)
}

// A pairEnd is the later answer of the last causal pair that countShare
// took others' spending from: room of what the server counted between the
// pair's answers was not this client's by their sequence numbers.
type pairEnd struct {
	seq, admitted, remaining float64
	from                     float64 // what the pair's first answer was told
	room, credited           float64
}

// countOvertaken folds an answer o, told r left in the window of the last
// causal pair, into the share: a request of this client's admitted after
// the pair's later request, before its answer came, and told more left
// than it but less than the pair's first, was counted between the two, and
// taken there for the others' spending. A burst released at once is
// counted in any order. (A lone client on ulule's 10 per 1 s, whose
// probe's burst was counted with its first answer last, took eight of its
// own for others': a share of 0.44 in 6 s, and half of each window
// unspent.) A window that does not refill only counts down, so the bounds
// keep out a new window's answers that were not told apart from the old
// one's (whole-second resets of a 1 s window), and a server that refills
// credits nothing: more left may be its refill. An answer does not say
// its cost: each is credited one, too little for costs over one, which
// errs toward a smaller share.
func (m *model) countOvertaken(o observation, r float64) {
	p := &m.pair
	if m.refills() || p.room < 1 || o.seq <= p.seq || o.seq > p.admitted || r <= p.remaining || r >= p.from {
		return
	}
	p.room--
	p.credited++
	m.ownAcc++
	m.updateShare(false)
}

// startFlights is how many requests may be in flight at once (0: no
// limit) on a server that states what is left (stated) and no window to
// pace the first requests at its steady rate by: until this client's share
// is seen, one, each request going out on the answer to the one before, so
// that the others' spending shows between them. Four clients each told at
// their first answer what was left took it at once for their own
// (haproxy's stick table sends Remaining alone: 10-20 refused in the first
// instant at 10 per 1 s, and as it counts refusals, its count stayed over
// the limit for a second; the kit's four, 15% refused, 9% so; 12% with one
// more in flight than answered, a slow start). Where a window is known
// its steady rate paces them instead, one at a time but not one in flight:
// an API whose answers take seconds is not held to a request at a time.
// Only for the first answers: a bucket that refills faster than they spend
// shows no spending to count, and its share is never seen.
func (m *model) startFlights(stated bool) int {
	if !stated || m.shareSeen || m.pooled || m.steady() > 0 || m.answers > 2*countedEnough {
		return 0
	}
	return 1
}

// firstPace reports whether the first answer o, to a request the bucket
// admitted with no rate (zero config, not told one), counts that request
// against the rate the plan now sets: the next goes an interval after it
// was sent, not at once on a bucket that starts full. Where o shows others'
// requests counted before it (Remaining under Limit − 1) and the plan paces
// one at a time until the share is seen (a burst of one): four clients on
// NestJS's 10 per 1 s each sent a second request with its first answer, and
// a third at the rate, twelve in the first tenth of a second, two refused in
// most runs. Not for a lone client, told all but its request is left: a
// token bucket kept full (the kit's Spring) shows its refill only when spent
// faster than the steady rate, and paced from its first answer used 95% of
// its quota against 101%. Not for an answer observed without its Flight:
// nothing says when, or whether, the bucket admitted it.
func (m *model) firstPace(o observation) bool {
	q := o.q
	return m.answers == 1 && o.inflight >= 0 && !m.told() && m.plan.burst == 1 &&
		q.Remaining >= 0 && q.Remaining < q.Limit-1
}

// apart returns how far apart this client's probes of a spent quota go
// where a lone client's would go d apart: where others share the quota,
// they probe it too, and at 1/share as far apart all of them together probe
// about as often as one client alone. A server that counts refusals is kept
// spent by the probes themselves: four clients on haproxy-remaining's 30
// per 3 s (what is left, no reset), each retrying a second after its last
// answer, drew 20–29 429s in 12 s, in one trace 16 of them probes before
// any was served again at 4.5 s; 8–12 this way (four traces each way). No
// further apart than MaxCooldown, unless d is.
func (m *model) apart(d float64) float64 { return max(d, min(d/m.ownShare(), m.maxCooldown)) }

// othersShare is the part of what the server counts that the other clients
// take, as far as this one can tell: 1 − share. A process pooled with others
// through a Store keeps its share at 1 (the store paces them together) and
// so learns none of theirs: for it, the others may take all. (Taken as
// none, a pooled process that found a new window short by what the others
// had spent since its turn read the server as a sliding window and its
// Remaining 0 as a count that gives back: no hold went to the store, and
// the next process's request was refused, about one run in three of
// redisstore's four processes on a fixed window of 50 per 5 s.)
func (m *model) othersShare() float64 {
	if m.pooled {
		return 1
	}
	return 1 - m.share
}

// alone reports whether this client has counted enough to know that it
// takes everything the server counts. A pooled process never is.
func (m *model) alone() bool { return m.shareSeen && m.share >= 1 && !m.pooled }

// countedEnough is how much counted tells this client's share on any
// limit; a window of a smaller limit never counts that much (crossed,
// reordered), and its share is told from less (updateShare).
const countedEnough = 8

// updateShare sets the share from the counts, once enough are counted, or
// at once where a refusal showed that others outran this client: refused
// with room left in a window that gives nothing back, more room than its
// own requests between took (countShare). A lone client is never refused
// so, and one that the others outrun at each window's turn, told 1 left
// and refused on it, counts one a window, which its decay halves: never
// enough on a small limit (four clients on express-rate-limit's 5 per 1
// s: one of them kept its share at 1 for 12 s).
func (m *model) updateShare(outran bool) {
	// Enough is countedEnough, or a quarter of a small limit (at least
	// 3): four clients on 10 per 2 s had each spent its 2.5 of the window
	// before 8 were counted (ulule: 9 of 69 answers 429, 2 with a
	// quarter; tollbooth 16-18 and 8; throttled 8 and 4).
	enough := float64(countedEnough)
	if m.srvLimit > 0 {
		enough = min(enough, max(3, m.srvLimit/4))
	}
	known := m.spentAcc >= enough || outran
	m.shareSeen = m.shareSeen || known
	if f := (m.ownAcc + 1) / (m.spentAcc + 1); known && !m.pooled {
		// Enough counted to tell: others spend a tenth or more of what
		// the server counts, and this client takes only its share
		// (reordering alone stays within the tenth), or they do not.
		// Until the decayed sums say enough again, the share stays.
		m.share = 1
		if f < 0.9 {
			m.share = max(f, minShare)
		}
	}
}
