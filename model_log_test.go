package throttle

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The server model against sliding logs whose windows are as short as a
// whole-second reset's slack: what a told rate says of the window, what a
// log's give-back says of the log, and what answers out of order do not.

// flaskReset is Flask-Limiter's reset, for a log of 1 s, for a request
// answered at (seconds on the client's clock, the server's whole second
// ticking at phase): the second of the newest request in its log, plus
// two.
func flaskReset(at, phase float64) float64 { return flaskResetOf(1, at, phase) }

// flaskResetOf is Flask-Limiter's reset for a log of w seconds: the second
// of the newest request in it, plus one, plus w.
func flaskResetOf(w, at, phase float64) float64 {
	return math.Floor(at+phase) + 1 + w - phase
}

// Flask-Limiter's moving window of 10 per 1 s, told 10/s: its reset reads
// the window as 2 s and places its end a second or more after it. The told
// rate gives the window (the server's limit over it), and a window spent
// from its first answer on is probed a window after that answer, not at
// the reset's latest end, where 10 of the 20 a window could serve were
// lost every 2 s (54 of 120 in 12 s).
func TestModelToldWindowEndsByItsLength(t *testing.T) {
	m := newModel(float64(10*time.Minute), PaceEven, 10)
	var p plan
	for k := 1; k <= 10; k++ {
		at := 0.105 * float64(k-1)
		p = m.observe(ans(float64(k), float64(k), at, at+0.003, 10, float64(10-k), flaskReset(at+0.003, 0.8)))
	}
	require.Equal(t, 2*sec, m.winRead, "read from the resets")
	require.Equal(t, sec, m.winLen, "the told rate's window")
	assert.InDelta(t, 1.006*sec, float64(p.capEnd), 1e6, "a window after the first answer, and its latency")
	assert.Equal(t, 10.0, p.capSeq(secs(1)), "nothing more before then")
}

// A lone client told 10/s on a sliding log of 10 per 1 s opens a window
// with two requests at once and spends the rest at its pace. A window after
// the two, its probe is told one left: the log gave both back, and a
// sliding counter, whose last window counted one (the window's first
// answer found nine left), would have given back a sixth of one. Read as
// such a counter, the cap grew at a request a second from its next tick, a
// second on; read as a log, it grows from when the log gives back this
// client's next request.
func TestModelLogsLumpIsNoSlidingCounters(t *testing.T) {
	m := newModel(float64(10*time.Minute), PaceEven, 10)
	sent := []float64{0, 0.001}
	for k := 3; k <= 10; k++ {
		sent = append(sent, 0.105*float64(k-2))
	}
	for k, at := range sent {
		m.observe(ans(float64(k+1), float64(k+1), at, at+0.003, 10, float64(9-k), flaskReset(at+0.003, 0.3)))
	}
	require.Equal(t, sec, m.winLen)
	p := m.observe(ans(11, 11, 1.004, 1.007, 10, 1, flaskReset(1.007, 0.3)))
	assert.Equal(t, kindRefill, m.kind)
	assert.True(t, m.mayBeLog(), "a log")
	assert.Less(t, float64(p.capAt), 1.2*sec, "grown from the log's next give-back, not a tick a second on")
	assert.GreaterOrEqual(t, p.capSeq(secs(1.5)), 14.0, "four more by 1.5 s: the log gave back those sent until 0.42 s")
}

// A counter that reads its clock in whole seconds gives back a third of its
// last 3 s window at each tick, now and then as much as a log would have of
// this client's paced requests. Given back more than such a log would, a
// client alone knows the server is none, and reads no later lump as one.
func TestModelMoreThanALogGivesBackIsNoLog(t *testing.T) {
	m := testModel()
	m.kind, m.srvLimit, m.winLen, m.winFirst = kindRefill, 30, 3*sec, 27 // its last window counted 3
	m.logWin, m.shareSeen = 3*sec, true                                  // a window as a log would hold it; alone, and seen so
	for at := 0.0; at < 3; at += 0.1 {
		m.sends.add(secs(at), secs(at+0.002))
	}
	prev := answer{ok: true, seq: 30, remaining: 0, arrived: secs(3.05)}
	o := ans(31, 31, 3.5, 3.502, 30, 9, 6)
	require.False(t, m.weighLog(o, prev, 9, 1), "ten back where a log gives back five")
	require.True(t, m.notLog)
	o = ans(31, 31, 3.52, 3.522, 30, 4, 6)
	assert.False(t, m.weighLog(o, prev, 4, 1), "five back, as a log would: still no log")
}

// Answers out of order do not bound a log's window: the log that answered
// a request had not counted those answered since it went. nest's log of
// 10 per 1 s counted a burst of eight in another order than it went, and
// answered them in a third; bounded by the requests answered first, its
// window was 12 ms, and spent at 1000/s it drew a 429 every window.
func TestModelLogBoundIgnoresRequestsAnsweredSince(t *testing.T) {
	m := testModel()
	m.kind, m.bucket, m.refilled = kindRefill, true, true
	m.srvLimit, m.winLen, m.winRead = 10, sec, sec
	for k := range 10 {
		at := 0.105 * float64(k)
		m.sends.add(secs(at), secs(at+0.003))
	}
	m.sends.add(secs(1.05), secs(1.057)) // still held at 2.048
	// Sent 2.036 s on, one a millisecond; counted 12, 15, 16, 17, 18, 13,
	// 19, 14 (8 left down to 1); answered in this order.
	sent := func(seq float64) instant { return secs(2.036 + 0.001*(seq-12)) }
	for _, a := range []struct{ seq, at float64 }{{12, 2.041}, {15, 2.043}, {16, 2.045}, {13, 2.048}, {18, 2.048}} {
		m.sends.add(sent(a.seq), secs(a.at))
	}
	o := ans(17, 19, 2.041, 2.048, 10, 5, 0)
	m.sends.add(o.sent, o.arrived)
	m.logBound(o, 5)
	assert.InDelta(t, 1.418*sec, m.logWin, 1e6, "five held, o's among them: the request sent at 0.63 s had been given back")
}

// A told window that has passed while what is left is still spent (a
// burst after a pause, on a log whose resets never showed a new window)
// ends when the log gives back the oldest request of this client's that it
// holds, not at the told window after the first answer, long past: a cap
// ended before the answer that set it is none.
func TestModelPassedToldWindowEndsAtTheLogsReturn(t *testing.T) {
	m := newModel(float64(10*time.Minute), PaceEven, 10)
	m.observe(ans(1, 1, 0, 0.003, 10, 9, flaskReset(0.003, 0.3)))
	var p plan
	for k := 2; k <= 10; k++ {
		at := 1.5 + 0.01*float64(k-2)
		p = m.observe(ans(float64(k), float64(k), at, at+0.003, 10, float64(10-k), flaskReset(at+0.003, 0.3)))
	}
	require.Equal(t, sec, m.winLen)
	assert.InDelta(t, 2.503*sec, float64(p.capEnd), 1e6, "the request sent at 1.5 s is given back a window on")
}

// Told a rate above the server's (Config.Limit is a ceiling), the window it
// gives the server's limit is too short: its end is probed once, and a
// refusal there leaves the window to the resets.
func TestModelToldWindowRefusedAtItsEndIsTooShort(t *testing.T) {
	m := newModel(float64(10*time.Minute), PaceEven, 15) // the server: 30 per 3 s
	var p plan
	for k := 1; k <= 30; k++ {
		at := 0.06 * float64(k-1)
		p = m.observe(ans(float64(k), float64(k), at, at+0.002, 30, float64(30-k), 3))
	}
	require.True(t, m.windowTold(), "3 s read, 2 s told: within the reading's second")
	require.InDelta(t, 2.004*sec, float64(p.capEnd), 1e6, "a told window after the first answer")
	m.observe(refused(ans(31, 31, 2.004, 2.006, 30, 0, 3), 0))
	assert.True(t, m.toldShort)
	assert.False(t, m.windowTold())
}

// A refusal inside a window gives nothing back, whatever its count says:
// it rules no log out.
func TestModelRefusalIsNoEvidenceAgainstALog(t *testing.T) {
	m := testModel()
	m.kind, m.srvLimit, m.winLen, m.logWin, m.shareSeen = kindRefill, 10, sec, sec, true
	prev := answer{ok: true, seq: 10, remaining: 0, arrived: secs(0.9)}
	assert.False(t, m.weighLog(refused(ans(13, 13, 0.95, 0.951, 10, 0, 1), 0), prev, 0, 3))
	assert.False(t, m.notLog)
}

// Flask-Limiter's log of 30 per 3 s, told 10/s: its resets read 4 s, the
// told rate fits the window to 3 s, and the reset moves on with the clock
// (a bucket, maybe a log). Its first window is probed where a log gives
// back its first request, a window after it: not a second before that, as
// where the window is only read (a 429 and a whole window's Retry-After in
// every run, two 429s of 120).
func TestModelFittedLogWindowIsProbedAtItsLength(t *testing.T) {
	m := newModel(float64(10*time.Minute), PaceEven, 10)
	var p plan
	for k := 1; k <= 30; k++ {
		at := 0.055 * float64(k-1)
		p = m.observe(ans(float64(k), float64(k), at, at+0.003, 30, float64(30-k), flaskResetOf(3, at+0.003, 0.6)))
	}
	require.True(t, m.bucket, "the reset moved on with the clock")
	require.Equal(t, 4*sec, m.winRead)
	require.Equal(t, 3*sec, m.winLen, "the told rate's window")
	assert.InDelta(t, 3.006*sec, float64(p.capEnd), 1e6, "a window after the first answer, and its latency")
}

// What a sliding log gave back of the other clients' requests is read from
// what it held: the limit less what was left, less this client's requests
// still in it. A client alone, whose log held only its own, takes none of
// the refill for others'. (Taken at their share of the whole rate, a lone
// client paced under it held its share at 0.8 on Flask-Limiter's log of 10
// per 1 s: 94 of 120 served in 12 s.)
func TestModelOthersReturnedFromWhatTheLogHeld(t *testing.T) {
	m := testModel()
	m.kind, m.srvLimit, m.winLen, m.stated = kindRefill, 10, sec, true
	for k := range 8 { // eight of this client's, 0.125 s apart, each answered 2 ms on
		at := secs(0.125 * float64(k))
		m.sends.add(at, at.add(2e6))
	}
	prev := answer{ok: true, seq: 8, sent: secs(0.875), arrived: secs(0.877), remaining: 2}
	o := ans(9, 9, 1.0, 1.002, 10, 2, 0)
	assert.Zero(t, m.othersReturned(prev, o, 1.25), "the log held eight, all this client's")
	prev.remaining = 0 // it held ten: two others'
	assert.InDelta(t, 2*0.125/1.002, m.othersReturned(prev, o, 1.25), 1e-3, "two, given back evenly over the window")
	m.sends = sendLog{n: 2 * sendLogSize} // lost the window's start
	m.share = 0.5
	assert.Equal(t, 0.625, m.othersReturned(prev, o, 1.25), "the others' share of the whole refill")
}

// A token bucket kept nearly full, answered 100 ms away, leaves two spent
// at each answer: read as a sliding log holding this client's last two
// requests, a window of a third of a second. A refusal at the pace that
// window gave refutes the bound for good (refuteLogBound), and a bucket
// shown to refill is retried two requests' worth of its steady rate after
// a refusal, not held to its constant reset's latest second; the retry's
// own refusal is held there. (tollbooth's 10 per 1 s, answers 100 ms away:
// 73 of 130 served in 12 s, five 429s; 125 and one or two.)
func TestModelRefusalAtALogsPaceRefutesItsBound(t *testing.T) {
	m := testModel()
	at, seq := 0.0, 1.0
	answer := func(r float64) plan {
		p := m.observe(ans(seq, seq, at, at+0.1, 10, r, at+0.1+1))
		seq, at = seq+1, at+0.105
		return p
	}
	for k := 0; k < 40 && m.logWin == 0; k++ {
		answer(8 + float64(k%2))
	}
	require.Less(t, m.winLen, sec/2, "two spent at each answer: read as a log of a third of a second")
	require.True(t, m.mayBeLog(), "bucket %v refilled %v fullAt %v tokens %v logWin %v kind %v", m.bucket, m.refilled, m.fullAt, m.tokens, m.logWin, m.kind)

	o := refused(ans(seq, seq, at, at+0.1, 10, 0, at+0.1+1), 0)
	p := m.observe(o)
	seq, at = seq+1, at+0.105
	assert.Equal(t, sec, m.winLen, "refused at the log's pace: back to the window the resets read")
	assert.Zero(t, m.logWin)
	require.True(t, p.holdOn, "%+v", p)
	assert.InDelta(t, 0.2*sec, p.hold.sub(o.arrived), 1e6, "two requests' worth of 10/s")
	inFlight := refused(ans(seq, seq, at-0.08, at+0.03, 10, 0, at+0.03+1), 0) // sent before o was answered
	seq++
	p = m.observe(inFlight)
	assert.InDelta(t, 0.2*sec, p.hold.sub(inFlight.arrived), 1e6, "a refusal sent before the first came is no retry's")

	at = p.hold.sub(secs(0)) / sec
	o = refused(ans(seq, seq, at, at+0.1, 10, 0, at+0.1+1), 0)
	p = m.observe(o)
	seq, at = seq+1, p.hold.sub(secs(0))/sec
	assert.GreaterOrEqual(t, p.hold.sub(o.arrived), sec, "the retry refused: held to the reset")

	for k := range 20 {
		answer(8 + float64(k%2))
	}
	assert.Equal(t, sec, m.winLen, "what came back over the holds is a bucket's tokens: no log to bound")
	assert.True(t, m.tokens)
}
