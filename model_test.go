package throttle

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The server model's own tests: observations in, plan out, no clock. Each
// case is one failure seen against a real server limiter.

const sec = float64(time.Second)

// ans builds an observation: the request numbered seq, sent at sent and
// answered at arrived (seconds), told remaining r of limit l, its window
// ending at reset (seconds; 0: not stated), a whole-second reset. admitted is
// what the bucket had admitted when the answer arrived.
func ans(seq, admitted, sent, arrived, l, r, reset float64) observation {
	o := observation{seq: seq, admitted: admitted, sent: secs(sent), arrived: secs(arrived), status: http.StatusOK,
		q: Quota{Limit: l, Remaining: r}}
	if reset != 0 {
		o.reset, o.resetOK, o.coarse = secs(reset), true, true
		o.delayed = wholeSeconds(o.reset.sub(o.arrived)) // as Bucket.observe tells it
	}
	return o
}

// secs is the instant s seconds after the epoch.
func secs(s float64) instant { return toInstant(s * sec) }

// refused makes o a 429 with the given Retry-After.
func refused(o observation, retryAfter time.Duration) observation {
	o.status, o.q.RetryAfter = http.StatusTooManyRequests, retryAfter
	return o
}

func testModel() model { return newModel(float64(10*time.Minute), PaceEven, 0) }

func TestModelRemainingIsACap(t *testing.T) {
	m := testModel()
	// Request 5 was told 3 left; requests 6..8 were admitted after it.
	p := m.observe(ans(5, 8, 1, 1.1, 30, 3, 3))
	assert.Equal(t, 8.0, p.capSeq(secs(1.1)), "nothing numbered beyond 5 + 3 before the window ends")
	assert.Equal(t, 5.0, p.capRef)

	// An answer to request 4 (sent before 5's answer arrived) says 5 left:
	// not causal, so it cannot raise the cap.
	o := ans(4, 8, 0.9, 1.2, 30, 5, 3)
	o.inflight = 3 // 6, 7 and 8
	p = m.observe(o)
	assert.Equal(t, 8.0, p.capSeq(secs(1.2)), "a non-causal answer never raises the cap")
	// One that says 1 left lowers it.
	o = ans(6, 8, 1.05, 1.25, 30, 1, 3)
	o.inflight = 2 // 7 and 8
	p = m.observe(o)
	assert.Equal(t, 7.0, p.capSeq(secs(1.25)), "any answer may lower the cap")
	// 7 and 8 answered, both told more than 1 left, as the server counted
	// them before 6: with nothing in flight, the window's least
	// Remaining is what is left after 8.
	o = ans(7, 8, 1.05, 1.3, 30, 2, 3)
	o.inflight = 1
	p = m.observe(o)
	assert.Equal(t, 7.0, p.capSeq(secs(1.3)), "8 still in flight")
	p = m.observe(ans(8, 8, 1.05, 1.31, 30, 3, 3))
	assert.Equal(t, 9.0, p.capSeq(secs(1.31)), "settled: 8 admitted, 1 left")
}

func TestModelCausalAnswerReplacesTheCap(t *testing.T) {
	m := testModel()
	m.observe(ans(5, 8, 1, 1.1, 30, 3, 3))
	// Request 9, admitted after the last answer arrived, is in a new window.
	p := m.observe(ans(9, 9, 3.2, 3.3, 30, 29, 6))
	assert.Equal(t, 38.0, p.capSeq(secs(3.3)), "a causal answer from a new window replaces the cap")
}

func TestModelStaleWindowIsIgnored(t *testing.T) {
	m := testModel()
	m.observe(ans(20, 22, 3.2, 3.3, 30, 29, 6))
	p := m.observe(ans(21, 22, 3.25, 3.4, 30, 0, 3)) // names the window that ended at 3 s
	assert.Equal(t, 49.0, p.capSeq(secs(3.4)), "an answer from an older window says nothing of this one")
}

func TestModelUnknownServerPacedAtSteadyRate(t *testing.T) {
	m := testModel()
	// 30 per 3 s: the largest reset minus arrival, rounded up, is the window.
	p := m.observe(ans(1, 1, 0, 0.001, 30, 29, 3))
	assert.Equal(t, 3*sec, m.winLen)
	assert.InDelta(t, 0.95*10, p.rate, 1e-9, "95% of the steady rate until the server shows it is a fixed window")
	assert.Equal(t, 1, p.burst, "one at a time until the answers show whether others spend on the quota")
	// The cap holds until the reset's latest end: a whole second on.
	assert.InDelta(t, 4.001*sec, float64(p.capEnd), 1e3, "cap end %v", time.Duration(p.capEnd))
}

func TestModelFixedWindowShownByFullRefill(t *testing.T) {
	m := testModel()
	m.observe(ans(1, 1, 0, 0.001, 30, 29, 3))
	m.observe(ans(29, 30, 2.7, 2.71, 30, 1, 3)) // well used
	require.Equal(t, kindUnknown, m.kind)
	p := m.observe(ans(31, 31, 4.0, 4.01, 30, 29, 7)) // full after the reset
	assert.Equal(t, kindFixed, m.kind)
	// Now what is left is spread over the time to the window's earliest end.
	assert.Greater(t, p.rate, 0.95*10, "a fixed window is spent before its end")
}

func TestModelRiseInsideAWindowIsARefillingServer(t *testing.T) {
	m := testModel()
	m.observe(ans(1, 1, 0, 0.01, 30, 2, 3))
	p := m.observe(ans(2, 2, 0.5, 0.51, 30, 5, 3)) // more left for a later request
	assert.Equal(t, kindRefill, m.kind)
	assert.Greater(t, p.capGrow, 0.0, "a refilling server's cap grows instead of ending")
	assert.Equal(t, never, p.capEnd)
}

// A server that states what is left and nothing else (Bucket4j): a bucket
// of 20 refilling at 10 a second. Its rise is a refill to measure, and the
// cap grows at what was measured: not at the request per MaxCooldown a
// refill of unknown rate granted (32 of 1200 served in the kit).
func TestModelRemainingOnlyBucketIsMeasured(t *testing.T) {
	m := testModel()
	m.observe(ans(1, 1, 0, 0.05, -1, 19, 0))
	assert.Equal(t, 20.0, m.srvLimit, "no limit stated: one more than the most left")
	p := m.observe(ans(2, 20, 0.05, 0.1, -1, 18, 0))
	assert.Equal(t, 20.0, p.capSeq(secs(0.1)), "what is left is a cap")
	m.observe(ans(20, 20, 0.1, 0.15, -1, 0, 0))
	p = m.observe(ans(21, 21, 1.15, 1.2, -1, 9, 0)) // 10 came back in a second
	assert.True(t, m.bucket, "a rise with no reset to count a turn by: a bucket")
	assert.InDelta(t, 9.5, m.avail, 0.5, "its refill, measured from what was left and what was taken")
	assert.Equal(t, never, p.capEnd)
	assert.InDelta(t, safety*m.avail/sec, p.capGrow, 1e-12, "the cap grows at the measured refill")
}

// Told the rate, a bucket gives back no faster than it: more back in a
// second is a lump (a sliding log's give-back of what was sent a window
// ago), and a cap grown at it runs ahead of the server.
func TestModelToldRateBoundsAMeasuredRefill(t *testing.T) {
	m := newModel(float64(10*time.Minute), PaceEven, 5)
	m.observe(ans(1, 1, 0, 0.05, -1, 19, 0))
	m.observe(ans(2, 20, 0.05, 0.1, -1, 18, 0))
	m.observe(ans(20, 20, 0.1, 0.15, -1, 0, 0))
	p := m.observe(ans(21, 21, 1.15, 1.2, -1, 9, 0)) // 10 came back in a second
	require.True(t, m.bucket)
	assert.Equal(t, 5.0, m.avail, "no more than the rate told")
	assert.InDelta(t, safety*5/sec, p.capGrow, 1e-12)
}

// Told the rate, a sliding window gives back no faster than it either:
// OpenAI's 60 a minute, enforced by a bucket of 10 whose reset reads a
// second, is a window of 60 per second by its headers, and a client alone
// took the 51 it would have given back for others' spending.
func TestModelToldRateBoundsASlidingGiveBack(t *testing.T) {
	for _, told := range []float64{0, 1} {
		m := newModel(float64(10*time.Minute), PaceEven, told)
		m.srvLimit, m.winLen, m.winFirst, m.crossings = 60, sec, 9, 1
		want := cmp.Or(told, 51.0)
		assert.InDelta(t, want, m.giveBack(secs(5), 0, 0)*sec, 1e-9, "told %v", told)
	}
}

// A request sent after an answer arrived is counted after it: where
// nothing comes back, it finds at least one less left, and finding as
// much shows a give-back (gaveBackOne). Bucket4j's bucket of 5 refilling
// at 10 a second: its first burst spent it, its refill after the hold
// read as a turn, and then, sent to at 22/s, it counted down 3, 2, 2.
func TestModelRemainingOnlyEqualCountIsAGiveBack(t *testing.T) {
	window := func(m *model) {
		m.observe(ans(1, 1, 0, 0.001, -1, 4, 0))
		m.observe(ans(5, 5, 0.002, 0.004, -1, 0, 0))
		m.observe(ans(6, 6, 1.004, 1.005, -1, 4, 0)) // back to full: a turn
		m.observe(ans(7, 7, 1.1, 1.101, -1, 3, 0))
	}
	for _, tc := range []struct {
		name string
		left float64 // what the request after one told 2 found left
		kind int
	}{
		{"as much left: one came back", 2, kindRefill},
		{"one less: nothing shown", 1, kindUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testModel()
			window(&m)
			require.Equal(t, 1.004*sec, m.winLen, "a window read from the turn")
			m.observe(ans(8, 8, 1.2, 1.201, -1, 2, 0))
			m.observe(ans(9, 9, 1.3, 1.301, -1, tc.left, 0))
			assert.Equal(t, tc.kind, m.kind, "the server's kind")
		})
	}
	t.Run("a 429", func(t *testing.T) {
		m := testModel()
		window(&m)
		m.observe(ans(8, 8, 1.2, 1.201, -1, 0, 0))
		m.observe(refused(ans(9, 9, 1.3, 1.301, -1, 0, 0), 0))
		assert.Equal(t, kindUnknown, m.kind, "a 429 finds nothing left either way")
	})
	t.Run("back to full", func(t *testing.T) {
		m := testModel()
		window(&m)
		m.observe(ans(8, 8, 1.2, 1.201, -1, 3, 0))
		assert.Equal(t, kindUnknown, m.kind, "as much left, but it may be back to full: a turn's to tell")
	})

	// In the first window, with no window known, it shows nothing yet;
	// told the rate, the window is known.
	for _, told := range []float64{0, 10} {
		t.Run(fmt.Sprintf("first window, told %v", told), func(t *testing.T) {
			m := newModel(float64(10*time.Minute), PaceEven, told)
			m.observe(ans(1, 1, 0, 0.01, -1, 4, 0))
			m.observe(ans(2, 2, 0.05, 0.06, -1, 3, 0))
			m.observe(ans(3, 3, 0.15, 0.16, -1, 2, 0))
			m.observe(ans(4, 4, 0.25, 0.26, -1, 2, 0))
			assert.Equal(t, told > 0, m.kind == kindRefill, "a give-back read")
		})
	}
}

// Told the rate, a server that states only what is left has the window
// the rate gives its limit: 10 per 1 s told 10/s. Its first window ends
// by then after its first answer, not a second after its last one (paced
// at the rate, 1.9 s after its first), and a turn seen late is no longer
// a window. (Bucket4j's fixed window and HAProxy's request rate, 10 per
// 1 s, told 10/s: 63% and 45-68% used; 99.7% and 79-80%.)
func TestModelToldRateGivesARemainingOnlyWindow(t *testing.T) {
	// firstWindow sends 10 at 10/s, told limit left; it returns the plan
	// after the last.
	firstWindow := func(m *model) plan {
		var p plan
		for seq := 1.0; seq <= 10; seq++ {
			at := 0.1 * (seq - 1)
			p = m.observe(ans(seq, seq, at, at+0.001, -1, 10-seq, 0))
		}
		return p
	}
	t.Run("told", func(t *testing.T) {
		m := newModel(float64(10*time.Minute), PaceEven, 10)
		p := firstWindow(&m)
		assert.Equal(t, secs(1.001), p.capEnd, "a window after the first answer")
		m.observe(ans(11, 11, 1.9, 1.901, -1, 9, 0)) // the turn, seen late
		assert.Equal(t, sec, m.winLen, "the window the rate gives the limit")
		p = m.observe(ans(20, 20, 2.7, 2.701, -1, 0, 0))
		assert.Equal(t, secs(2.901), p.capEnd, "a window after the turn's answer")
	})
	t.Run("not told", func(t *testing.T) {
		// The first window ends a second after the last answer, and the
		// turn is as long as it was seen.
		m := testModel()
		p := firstWindow(&m)
		assert.Equal(t, secs(1.901), p.capEnd, "a second after the last answer")
		m.observe(ans(11, 11, 1.9, 1.901, -1, 9, 0))
		assert.Equal(t, 1.9*sec, m.winLen, "from the first answer to the turn")
	})
	t.Run("told, probed at its end", func(t *testing.T) {
		// The probe at the told window's end, a few milliseconds after
		// it, found the server (HAProxy's sliding counter) still full;
		// the turn came a second later. The probe shows no longer
		// window: it went at the told one's end.
		m := newModel(float64(10*time.Minute), PaceEven, 10)
		firstWindow(&m)
		m.observe(ans(11, 11, 1.004, 1.005, -1, 0, 0))
		m.observe(ans(12, 12, 2.006, 2.007, -1, 9, 0))
		assert.Equal(t, sec, m.winLen, "the window the rate gives the limit")
	})
	t.Run("told, at the rate on a sliding counter", func(t *testing.T) {
		// HAProxy's request rate of 10 per 1 s, sent to at 10/s: the
		// 11th request, at the told window's end, is counted and finds
		// 0 left again. The server gives back as it counts; no window
		// is read yet, and the rate told is the steady one: the cap
		// grows at it, not held to a second later (a hold of a second,
		// then what the queue saved at once, which the counter weighed
		// for two seconds: 91–93 of 120 served in 12 s, 111 so).
		m := newModel(float64(10*time.Minute), PaceEven, 10)
		firstWindow(&m)
		p := m.observe(ans(11, 11, 1.001, 1.002, -1, 0, 0))
		require.Equal(t, kindRefill, m.kind)
		assert.Positive(t, p.capGrow, "a cap that grows")
		assert.GreaterOrEqual(t, p.capSeq(secs(1.25)), 12.0, "the next request within a quarter second")
		assert.LessOrEqual(t, p.rate, 10.0, "no faster than told")
	})
	t.Run("told above the server's rate", func(t *testing.T) {
		// Told 50/s, the window would be 0.2 s; the server counted a
		// request sent 0.9 s into its window in it: the window is
		// longer, and the turn reads it.
		m := newModel(float64(10*time.Minute), PaceEven, 50)
		firstWindow(&m)
		m.observe(ans(11, 11, 1.9, 1.901, -1, 9, 0))
		assert.Equal(t, 1.9*sec, m.winLen, "from the first answer to the turn")
	})
	t.Run("a told window longer than MaxCooldown", func(t *testing.T) {
		// Told 1/s, a limit of 10 is a window of 10 s, and MaxCooldown
		// is 2 s: no cap ends before its answer.
		m := newModel(float64(2*time.Second), PaceEven, 1)
		p := m.observe(ans(1, 1, 0, 0.001, -1, 9, 0))
		assert.Equal(t, secs(2.001), p.capEnd, "cut to MaxCooldown")
		p = m.observe(ans(10, 10, 2.25, 2.251, -1, 0, 0))
		assert.Greater(t, p.capEnd, secs(2.251), "a cap that ends after its answer")
	})
}

// truncatedWindow sends limit requests at 10/s into a fixed window of w
// seconds that opened at t0 with the first of them, each told its delay to
// the window's end truncated to whole seconds, as the server read it when
// the request came (a millisecond after it went); it returns the plan
// after the last.
func truncatedWindow(m *model, seq0, t0, w, limit float64) plan {
	var p plan
	for i := 0.0; i < limit; i++ {
		sent := t0 + 0.1*i
		delay := math.Floor(t0 + w - sent)
		p = m.observe(ans(seq0+i+1, seq0+i+1, sent, sent+0.001, limit, limit-1-i, sent+0.001+delay))
	}
	return p
}

// TestModelTruncatedDelayOfZeroEndsNoWindow: a fixed window of 20 per 2 s
// whose delays are truncated reads "0" through its last second. Each of
// those resets had passed when the next request went, and each answer was
// read as a new window, born short: a sliding window, paced at its steady
// rate and held a second at each turn (75% used). A request counted in the
// window after a "0" shows the delays truncated: the window ends up to a
// second after each reset, and is probed at its latest end.
func TestModelTruncatedDelayOfZeroEndsNoWindow(t *testing.T) {
	m := testModel()
	p := truncatedWindow(&m, 0, 0, 2, 20)
	assert.True(t, m.late, "counted after a delay of 0: truncated")
	assert.Zero(t, m.crossings, "one window")
	assert.NotEqual(t, kindRefill, m.kind)
	// Its "1"s end it 1–2 s after their answers, from 1.101 on, and its
	// "2" (the first answer's) 2–3 s after it: between 2.001 and 2.101.
	assert.Equal(t, secs(2.102), p.capEnd, "the latest end: a second after the soonest reset, and its latency")
	truncatedWindow(&m, 20, 2.102, 2, 20)
	assert.Equal(t, 1, m.crossings, "the probe's window")
	assert.Equal(t, kindFixed, m.kind, "a full refill at the turn")
}

// TestModelEpochSecondReadAtAWholeSecondIsNoDelayOfZero: a server that
// states its resets as Unix seconds, one of them read just as that second
// began. It reads as a delay of 0 s (whole seconds from the arrival), and
// the request after it was counted in the same window; but this server
// sends instants, which say nothing of how it rounds delays. (Probes sent
// just after a whole second on httprate's clock-aligned counter.)
func TestModelEpochSecondReadAtAWholeSecondIsNoDelayOfZero(t *testing.T) {
	m := testModel()
	for i := 1.0; i <= 5; i++ {
		at := 0.1 * i
		m.observe(ans(i, i, at, at+0.005, 30, 30-i, 3))
	}
	o := ans(6, 6, 2.999, 3, 30, 24, 3)
	require.True(t, o.delayed, "read at the whole second: a delay of 0 by its look")
	m.observe(o)
	m.observe(ans(7, 7, 3.101, 3.105, 30, 23, 3))
	assert.False(t, m.truncates, "an instant's second, not a truncated delay")
}

// TestModelToldRateSettlesAWholeSecondReset: fastify's 10 per 1 s, its
// reset in whole seconds rounded up ("1" all through a window), paced at a
// rate told of 10/s. The reset leaves a second's doubt; the told window,
// which the reset reads too, settles it.
func TestModelToldRateSettlesAWholeSecondReset(t *testing.T) {
	// window sends 10 at 10/s from at, told limit left; it returns the
	// plan after the last.
	window := func(m *model, seq0, at0 float64) plan {
		var p plan
		for i := 1.0; i <= 10; i++ {
			at := at0 + 0.1*(i-1)
			p = m.observe(ans(seq0+i, seq0+i, at, at+0.001, 10, 10-i, at+1.001))
		}
		return p
	}
	t.Run("told", func(t *testing.T) {
		m := newModel(float64(10*time.Minute), PaceEven, 10)
		p := window(&m, 0, 0)
		assert.Equal(t, secs(1.002), p.capEnd, "a window after the first answer, and its latency")
	})
	t.Run("not told", func(t *testing.T) {
		m := testModel()
		p := window(&m, 0, 0)
		assert.Equal(t, secs(1.002), p.capEnd, "a delay of a second, rounded up: the first reset")
	})
	t.Run("not told, counted in the window at its reset", func(t *testing.T) {
		// The probe at the reset still counted in the window: this
		// server truncates, and its resets are held to their latest end.
		m := testModel()
		window(&m, 0, 0)
		p := m.observe(ans(11, 11, 1.002, 1.003, 10, 0, 2.003))
		assert.True(t, m.late)
		assert.Equal(t, secs(2.002), p.capEnd, "the first reset's latest end: a second after it")
	})
	t.Run("not told, refused at its reset", func(t *testing.T) {
		m := testModel()
		window(&m, 0, 0)
		m.observe(refused(ans(11, 11, 1.002, 1.003, -1, -1, 0), time.Second))
		assert.True(t, m.late, "the window had not ended")
		p := window(&m, 11, 2.01)
		assert.Equal(t, secs(3.912), p.capEnd, "from then on, the last reset: the soonest a truncated window ends")
	})
	t.Run("told, refused there", func(t *testing.T) {
		// A probe at the told end refused: the window is longer than
		// told, or slides; the resets place it from then on.
		m := newModel(float64(10*time.Minute), PaceEven, 10)
		window(&m, 0, 0)
		m.observe(refused(ans(11, 11, 1.002, 1.003, 10, 0, 2.003), time.Second))
		assert.True(t, m.toldShort, "shown short")
		assert.False(t, m.toldAgrees())
		assert.Equal(t, kindRefill, m.kind, "a fixed window of that length would have turned")
	})
	t.Run("told, refused before its end", func(t *testing.T) {
		// Probed at a cap that ended before the told end (by a reset
		// shown on time, say): no sign against the told window.
		m := newModel(float64(10*time.Minute), PaceEven, 10)
		window(&m, 0, 0)
		m.plan.capEnd = secs(0.96)
		m.observe(refused(ans(11, 11, 0.96, 0.961, 10, 0, 1.961), time.Second))
		assert.False(t, m.toldShort, "not shown short")
		assert.Equal(t, kindUnknown, m.kind)
	})
	t.Run("told 1000 per minute", func(t *testing.T) {
		// 1000/60 gives a window a few hundredths of a nanosecond short
		// of the minute the reset reads: the same window.
		m := newModel(float64(10*time.Minute), PaceEven, 1000.0/60)
		m.observe(ans(1, 1, 0, 0.001, 1000, 999, 60.001))
		assert.Equal(t, 60*sec, m.winLen)
		assert.True(t, m.toldAgrees())
	})
	t.Run("told, quota left past its end", func(t *testing.T) {
		// A reading of "1" that still has quota past the told window's
		// end (tollbooth's token bucket, kept nearly full at the told
		// rate) is the resets' to place, as if not told.
		told, alone := newModel(float64(10*time.Minute), PaceEven, 10), testModel()
		var pt, pa plan
		for i := 1.0; i <= 15; i++ {
			at := 0.1 * (i - 1)
			o := ans(i, i, at, at+0.001, 10, 9, at+1.001)
			pt, pa = told.observe(o), alone.observe(o)
		}
		assert.Equal(t, pa.capEnd, pt.capEnd)
	})
}

// The same dialect on a fixed window of 30 per 3 s: the count comes back
// whole at the turn. That is a new window, its length at most the time from
// the last window's first answer, and the cap of a spent window ends there.
func TestModelRemainingOnlyWindowTurns(t *testing.T) {
	m := testModel()
	m.observe(ans(1, 1, 0, 0.05, -1, 29, 0))
	m.observe(ans(30, 30, 0.1, 0.15, -1, 0, 0))
	p := m.observe(ans(31, 31, 3.2, 3.25, -1, 29, 0)) // the turn, seen a probe late
	assert.False(t, m.bucket, "a full count back is a turn, not a refill")
	assert.Equal(t, 3.2*sec, m.winLen, "at most from the last window's first answer to this one")
	assert.Equal(t, 60.0, p.capSeq(secs(3.25)))
	p = m.observe(ans(60, 60, 3.5, 3.55, -1, 0, 0))
	assert.Equal(t, secs(6.45), p.capEnd, "a spent window's cap ends a window after its first answer")
}

// The same dialect on a fixed window of 10 per 1 s that keeps to the
// server's clock, its turns at 0.25 s past each second. The first turn is
// seen by a probe a hold put 0.75 s into its window, the next by a paced
// request 0.3 s after that probe: read from the probe's answer, the window
// was 0.3 s, and each one after was probed early and refused (6–12% of
// answers 429s in the kit). The refused probe shows a window that lasts
// longer than that, and the turns bound it: from the send before one turn
// to the answer after the next.
func TestModelRemainingOnlyTurnsKeepToAClock(t *testing.T) {
	spent := func() model {
		m := testModel()
		m.observe(ans(1, 1, 0, 0.001, -1, 9, 0))
		m.observe(ans(10, 10, 0.001, 0.004, -1, 0, 0))
		m.observe(ans(11, 11, 1.004, 1.006, -1, 9, 0)) // the turn at 0.25, a probe late
		for k := 12.0; k <= 15; k++ {
			at := 1.006 + 0.05*(k-11)
			m.observe(ans(k, k, at, at+0.002, -1, 20-k, 0))
		}
		m.observe(ans(16, 16, 1.323, 1.325, -1, 9, 0)) // the turn at 1.25
		require.Less(t, m.winLen, 0.5*sec, "as if the probe had opened its window: a guess")
		for k := 17.0; k <= 24; k++ {
			at := 1.325 + 0.03*(k-16)
			m.observe(ans(k, k, at, at+0.002, -1, 24-k, 0))
		}
		return m
	}

	// Probed at the guessed end to the nanosecond, as the gate sends it, and
	// refused: that too is a window that lasted longer than the guess.
	m := spent()
	end := m.plan.capEnd
	m.observe(refused(observation{seq: 25, admitted: 25, sent: end, arrived: end.add(2e6), status: http.StatusOK, q: Quota{Limit: -1, Remaining: 0}}, 0))
	m.observe(ans(26, 26, 2.26, 2.262, -1, 9, 0)) // the turn at 2.25
	assert.True(t, m.clockTurns, "refused at the guessed end")

	m = spent()
	m.observe(refused(ans(25, 25, 1.661, 1.663, -1, 0, 0), 0)) // probed at the guessed end
	m.observe(refused(ans(26, 26, 2.202, 2.204, -1, 0, 0), 0))
	p := m.observe(ans(27, 27, 3.055, 3.057, -1, 9, 0)) // the turn at 3.25
	assert.True(t, m.clockTurns, "a window lasted longer than the guess")
	assert.InDelta(t, 1.324*sec, m.winLen, 1e6, "from the send before the first turn to the answer after the next")
	for k := 28.0; k <= 36; k++ {
		at := 3.057 + 0.02*(k-27)
		p = m.observe(ans(k, k, at, at+0.002, -1, 36-k, 0))
	}
	assert.GreaterOrEqual(t, p.capEnd, secs(3.25+1), "a spent window's cap ends no sooner than the window")
}

// Remaining alone on a token bucket holding 2 that refills 5 a second: held
// a default second after its first two, then probed, it reads as 2 per
// second, and paced at that it is full on every answer. Four answers in a
// row found full cannot come from windows of a second (two of them would
// share one): the window is shortened to what they span, and the pace
// climbs. The answer that finds it drained puts the pace a safety share
// under the last that kept it full; a turn read after it does not undo
// that; and the next climb, once four answers at the pace put back found it
// full, goes halfway to the pace that drained it, not past.
func TestModelRemainingOnlyFullTooOftenIsNoWindowThatLong(t *testing.T) {
	start := func() (model, plan) {
		m := testModel()
		m.observe(ans(1, 1, 0, 0.002, -1, 1, 0))
		m.observe(ans(2, 2, 0.002, 0.004, -1, 0, 0))
		p := m.observe(ans(3, 3, 1.006, 1.008, -1, 1, 0)) // the probe, a turn
		require.InDelta(t, 1.006*sec, m.winLen, 1e6)
		return m, p
	}
	climb := func(m *model) (p plan) {
		for k := 4.0; k <= 5; k++ {
			at := 1.006 + 0.53*(k-3)
			m.observe(ans(k, k, at, at+0.002, -1, 1, 0))
		}
		assert.InDelta(t, 1.006*sec, m.winLen, 1e6, "three full in a row fit windows of a second")
		m.observe(ans(6, 6, 2.596, 2.598, -1, 1, 0))
		assert.InDelta(t, (2.598-1.006)/2*sec, m.winLen, 1e6, "four span three turns, two windows apart at least")
		for k := 7.0; k <= 8; k++ {
			at := 2.596 + 0.3*(k-6)
			p = m.observe(ans(k, k, at, at+0.002, -1, 1, 0))
		}
		return p
	}

	m, p0 := start()
	p := climb(&m)
	assert.Greater(t, p.rate, p0.rate)
	fastest, drained, kept := p.rate, m.winLen, m.full.kept
	require.Greater(t, kept, drained)
	p = m.observe(ans(9, 9, 3.4, 3.402, -1, 0, 0)) // drained at that pace
	back := kept / safety
	assert.InDelta(t, back, m.winLen, 1, "a safety share under the pace that last kept it full")
	assert.Less(t, p.rate, fastest)
	assert.Greater(t, p.rate, p0.rate)
	at := 3.4
	full := func(k float64) {
		at += 0.35
		m.observe(ans(k, k, at, at+0.002, -1, 1, 0))
	}
	full(10) // back to full: a turn, read no shorter than the window put back
	assert.InDelta(t, back, m.winLen, 1, "a turn does not undo the step back")
	for k := 11.0; k <= 13; k++ {
		full(k)
	}
	assert.InDelta(t, back, m.winLen, 1, "three at the pace put back: no climb yet")
	full(14)
	assert.InDelta(t, (back+drained)/2, m.winLen, 1, "four at it: halfway to the pace that drained it")

	// A request of this client's went unanswered in between: no run across
	// it, but the step back still comes with the drain.
	m, _ = start()
	climb(&m)
	kept = m.full.kept
	m.observe(ans(10, 10, 3.2, 3.202, -1, 1, 0)) // 9 lost
	m.observe(ans(11, 11, 3.4, 3.402, -1, 0, 0))
	assert.InDelta(t, kept/safety, m.winLen, 1)

	// Refused or not, an error that is no refusal drains nothing.
	m, _ = start()
	climb(&m)
	w := m.winLen
	o := ans(9, 9, 3.4, 3.402, -1, 1, 0)
	o.status = http.StatusNotFound
	m.observe(o)
	assert.LessOrEqual(t, m.winLen, w)
	assert.Zero(t, m.full.drained)

	// A fixed window of 2 per second paced alike finds one less on every
	// second request: never two full in a row.
	m, _ = start()
	for k := 4.0; k <= 12; k++ {
		at := 1.006 + 0.53*(k-3)
		r := 1.0
		if int(k)%2 == 0 {
			r = 0 // the second in its window
		}
		m.observe(ans(k, k, at, at+0.002, -1, r, 0))
	}
	assert.GreaterOrEqual(t, m.winLen, 1.006*sec, "a fixed window of 2 is not read shorter")

	// The same sent to once every 1.2 s: every answer full, windows of
	// their own, and the window read no shorter than the second it is.
	m, _ = start()
	for k := 4.0; k <= 14; k++ {
		at := 1.006 + 1.2*(k-3)
		m.observe(ans(k, k, at, at+0.002, -1, 1, 0))
	}
	assert.GreaterOrEqual(t, m.winLen, 1.0*sec, "no shorter than the window")

	// Four full answers at one instant (a count that never goes down, no
	// latency) bound no window: it is not read as none.
	m, _ = start()
	for k := 4.0; k <= 8; k++ {
		m.observe(ans(k, k, 2, 2, -1, 1, 0))
	}
	assert.Greater(t, m.winLen, 0.0)
}

func TestModelMovingResetWithoutRefillIsACapToIt(t *testing.T) {
	m := testModel()
	// gin-rate-limit: 30 tokens that come back whole only once 3 s (in
	// whole Unix seconds) have passed since the last admitted request, so
	// its reset moves on with every request and nothing comes back before.
	// Paced at 10/s, request k is told 30 − k left.
	var p plan
	for k := 1; k <= 30; k++ {
		at := 0.1 * float64(k-1)
		p = m.observe(ans(float64(k), float64(k), at, at+0.001, 30, float64(30-k), math.Floor(at)+3))
	}
	require.True(t, m.bucket, "a reset that moves on with the clock")
	assert.False(t, m.refilled, "nothing came back")
	assert.Equal(t, 1.0, m.share, "the refill a bucket would have made is no other client's spending")
	// Grown at this client's share of a refill that never came, the cap let
	// a request go at 0 left: a 429 in every 3 s.
	assert.Equal(t, 30.0, p.capSeq(secs(5.9)), "the cap does not grow")
	// Spent after a window less a second, the time a sliding log gives its
	// first request back: one probe a whole window after the first answer.
	assert.InDelta(t, 3.002*sec, float64(p.capEnd), 1e3, "probed a window after its first answer: cap end %v", time.Duration(p.capEnd))
	o := ans(31, 31, 3.002, 3.003, 30, 0, 5)
	o.status = http.StatusTooManyRequests
	p = m.observe(o)
	require.True(t, m.holdsToReset, "refused: nothing comes back before the reset")
	// The next window goes at once: held back, it only moves the reset on.
	p = m.observe(ans(32, 32, 6.001, 6.002, 30, 29, 9))
	assert.Equal(t, math.Inf(1), p.rate, "spent at once")
	assert.GreaterOrEqual(t, p.burst, 29, "spent at once")
	assert.Equal(t, 61.0, p.capSeq(secs(6.5)), "the cap holds the rest")
	assert.Zero(t, p.spare, "zero config, the rate is no limit: nothing to hand over")

	// Told 10/s, the gate paces at most at it, and what it saved up over
	// the hold is the burst before it: what is left goes at once all the
	// same (each window at 10/s, 3 s, then 3 s to its refill: 74% used).
	m = newModel(float64(10*time.Minute), PaceEven, 10)
	for k := 1; k <= 30; k++ {
		at := 0.1 * float64(k-1)
		m.observe(ans(float64(k), float64(k), at, at+0.001, 30, float64(30-k), math.Floor(at)+3))
	}
	o = ans(31, 31, 3.002, 3.003, 30, 0, 5)
	o.status = http.StatusTooManyRequests
	m.observe(o)
	require.True(t, m.holdsToReset)
	p = m.observe(ans(32, 32, 6.001, 6.002, 30, 29, 9))
	assert.Equal(t, 29.0, p.spare, "the 29 left, handed to the gate at once")
	assert.GreaterOrEqual(t, p.burst, 29)

	// A bucket that does refill shows it: more left than this client's
	// spending explains, over a second.
	m = testModel()
	for k := 1; k <= 45; k++ {
		at := 0.1 * float64(k-1)
		p = m.observe(ans(float64(k), float64(k), at, at+0.001, 30, 29-float64(k)/2, math.Floor(at)+3))
	}
	assert.True(t, m.bucket && m.refilled, "bucket %v refilled %v", m.bucket, m.refilled)
	assert.Greater(t, p.capGrow, 0.0, "its cap grows")
}

func TestModelBucketAtItsTopMeasuresNoLess(t *testing.T) {
	// A token bucket of 2 refilling 5 a second (OpenAI's limit of 5 per
	// 1 s, enforced by a smaller bucket), its reset when it is full
	// again, to the millisecond. A lone client sends two at once, then
	// one at 95% of the rate measured: under the refill, each answer
	// finds the bucket as full as it is ever seen, one left, and what
	// came back is what this client took.
	m := testModel()
	tokens, last, at := 2.0, 0.0, 0.0
	for k := 1; k <= 150; k++ {
		tokens = min(2, tokens+5*(at-last)) - 1
		last = at
		o := ans(float64(k), float64(k), at, at+0.002, 5, math.Floor(tokens), 0)
		o.reset, o.resetOK = secs(at+(2-tokens)/5), true
		m.observe(o)
		next := 0.21
		switch {
		case k == 1:
			next = 0.04 // two at once: the reset moves before the first could pass
		case m.avail > 0:
			next = 1 / (safety * m.avail)
		}
		at += max(next, (1-tokens)/5) // and not before a token is back
	}
	require.True(t, m.bucket && m.avail > 0, "a bucket, its give-back measured")
	// Smoothed toward each such measure, the refill fell a twentieth at
	// each: 5.1/s to 3/s over 30 s, 79% of the quota used (the kit's, in
	// OpenAI's dialect).
	assert.GreaterOrEqual(t, m.avail, 4.5, "no less than this client took")
	assert.Greater(t, last, 20.0, "long enough to show it")
}

// Flask-Limiter's moving window, a sliding log of 30 per 3 s: its reset is
// when the newest logged request expires, its Unix second plus 4, so it
// moves on with the clock as gin-rate-limit's does; but each request is
// given back 3 s after it was counted. A cap spent before the first give-back
// ends there, a window (read as 4 s: a second less) after the first answer,
// and its probe tells the two apart.
func TestModelMovingResetProbedWhenTheFirstComesBack(t *testing.T) {
	spend := func(m *model) plan {
		var p plan
		for k := 1; k <= 20; k++ { // 10/s for 2 s
			at := 0.1 * float64(k-1)
			p = m.observe(ans(float64(k), float64(k), at, at+0.002, 30, float64(30-k), math.Floor(at)+4))
		}
		for k := 21; k <= 30; k++ { // the rest at once
			p = m.observe(ans(float64(k), 30, 2, 2.002+0.001*float64(k-20), 30, float64(30-k), 6))
		}
		return p
	}
	m := testModel()
	p := spend(&m)
	require.True(t, m.bucket && !m.refilled, "a moving reset, nothing given back yet")
	assert.Equal(t, 4*sec, m.winLen)
	assert.InDelta(t, 3.014*sec, float64(p.capEnd), 1e3, "probed a window less a second after the first answer, plus a latency: %v", time.Duration(p.capEnd))

	// Admitted after nothing was left: the log gives back.
	m.observe(ans(31, 31, 3.004, 3.006, 30, 0, 7))
	assert.True(t, m.refilled)

	// Nothing left: the log gives back this client's oldest request it
	// holds, a window after it was answered (3.006 s: the request sent at
	// 0 s was given back by then): one may go then, or once the rate
	// measured from this answer on brings one, whichever is later.
	p = m.observe(ans(32, 32, 3.05, 3.052, 30, 0, 7))
	require.True(t, m.refills())
	back := secs(3.102)                                          // the request answered at 0.102 s, held 3 s
	first := max(back, p.capAt.add(1/p.capGrow))                 // and the rate measured
	assert.Less(t, p.capSeq(first.add(-1e6)), 33.0, "no sooner") // than the log gives one back
	assert.InDelta(t, 33.0, p.capSeq(first), 1e-6, "the first then")

	// Refused: nothing comes back before the reset, and the caps end there
	// from then on.
	m = testModel()
	spend(&m)
	o := ans(31, 31, 3.004, 3.006, 30, 0, 6)
	o.status = http.StatusTooManyRequests
	m.observe(o)
	assert.True(t, m.holdsToReset)
	m.observe(ans(32, 32, 6.1, 6.102, 30, 29, 10))
	p = m.observe(ans(60, 60, 6.2, 6.202, 30, 0, 10))
	assert.InDelta(t, 10.104*sec, float64(p.capEnd), 1e3, "at the latest reset, not 3 s after the window's first answer: %v", time.Duration(p.capEnd))

	// Refused, and then admitted before that reset could pass (a log
	// whose resets were not a second long, probed early): it gives back
	// before its reset after all, and is not held to it.
	m = testModel()
	spend(&m)
	m.observe(o)
	require.True(t, m.holdsToReset)
	p = m.observe(ans(32, 32, 4.001, 4.003, 30, 0, 8))
	assert.True(t, m.refilled, "admitted 2 s before the reset the refusal stated")
	assert.Less(t, p.rate, math.Inf(1), "not spent at once as a bucket held to its reset")
}

func TestModelGCRASecondsUntilFull(t *testing.T) {
	m := testModel()
	// throttled/throttled: the reset is when the bucket is full again, so
	// it moves on before the old one could have passed.
	m.observe(ans(1, 1, 0, 0.001, 30, 29, 1))
	m.observe(ans(15, 16, 0.2, 0.201, 30, 15, 2.2))
	m.observe(ans(25, 26, 0.45, 0.5, 30, 10, 3.5)) // before 2.2 s could have passed
	assert.True(t, m.fullAt && m.bucket, "kind %d fullAt %v bucket %v", m.kind, m.fullAt, m.bucket)
	// Over 1.1 s, 11 were taken and the count stayed: 10/s came back for it.
	m.observe(ans(36, 37, 1.55, 1.6, 30, 10, 3.6))
	assert.InDelta(t, 10, m.avail, 1e-6)
	assert.InDelta(t, 10, m.steady(), 1e-6, "the measured rate is the steady rate")
}

// A burst on what a GCRA bucket had left (throttled/throttled told 10/s: its
// idle tokens spent at once), counted in one order and answered in another.
// The first request of it the server counted (28 left) sets the cap; the
// second it counted (27 left) is answered after the 16th (13 left), which
// lowered the cap: the second, though sent after the reference answer
// arrived, is no fresher, and the cap stays. One sent after the lower
// answer arrived was counted after it, and raises the cap, however much
// more it tells left. (Raised back, three of the burst were refused in one
// table run of three.)
func TestModelCausalAnswerCountedEarlierRaisesNoCap(t *testing.T) {
	lowered := func() (*model, float64) {
		m := newModel(float64(10*time.Minute), PaceEven, 10)
		for i := 1; i <= 17; i++ { // paced, the bucket nearly full
			s := 0.1 * float64(i-1)
			m.observe(ans(float64(i), float64(i), s, s+0.001, 30, 28, s+1.001))
		}
		o := ans(33, 33, 1.602, 1.603, 30, 28, 2.603) // counted first
		o.behind, o.inflight = 15, 15
		p := m.observe(o)
		require.InDelta(t, 61.0, p.capSeq(secs(1.603)), 0.01, "18 to 32 in flight: the bucket leaves them out")
		o = ans(29, 36, 1.602, 1.604, 30, 13, 3.604) // counted 16th
		o.behind, o.inflight = 10, 17
		p = m.observe(o)
		require.InDelta(t, 42.0, p.capSeq(secs(1.604)), 0.01)
		return &m, 42
	}
	m, low := lowered()
	o := ans(34, 40, 1.603, 1.6041, 30, 27, 2.6041) // counted second
	o.behind, o.inflight = 11, 20
	p := m.observe(o)
	assert.InDelta(t, low, p.capSeq(o.arrived), 0.01, "counted before 29: no fresher")

	m, _ = lowered()
	o = ans(41, 41, 1.7, 1.701, 30, 16, 2.701) // sent after 29's answer: three more left
	p = m.observe(o)
	assert.Greater(t, p.capSeq(o.arrived), low, "fresher: it raises the cap")
}

// A reset that says when the bucket is full again, from a bucket that holds
// less than its stated limit (30 per 3 s stated, 10 held: a limit enforced
// over a shorter span, as OpenAI documents): the deficit that refills by
// the reset is what the bucket holds less what is left, not the limit
// less it. Read as the limit's, 7 missing for 0.7 s read as 27: a window
// of 0.78 s, a pace four times the server's.
func TestModelGCRADeficitOfABucketSmallerThanItsLimit(t *testing.T) {
	m := testModel()
	fine := func(o observation) observation { o.coarse, o.delayed = false, false; return o }
	m.observe(fine(ans(1, 1, 0, 0.001, 30, 9, 0.101)))    // a fresh bucket of 10: full again in 0.1 s
	m.observe(fine(ans(5, 5, 0.05, 0.051, 30, 5, 0.551))) // full again in 0.5 s, before the first reset passed
	m.observe(fine(ans(9, 9, 0.1, 0.101, 30, 3, 0.801)))  // 7 missing, 0.7 s
	require.True(t, m.fullAt, "kind %d fullAt %v bucket %v", m.kind, m.fullAt, m.bucket)
	assert.InDelta(t, 3*sec, m.winLen, 0.01*sec, "30 at the 10/s it refills")
}

func TestModelOtherClientsShare(t *testing.T) {
	m := testModel()
	m.observe(ans(1, 1, 0, 0.01, 100, 99, 10))
	// Each step this client sends 1 while the server counts 4.
	for i := 1.0; i <= 10; i++ {
		m.observe(ans(1+i, 1+i, 0.1*i, 0.1*i+0.01, 100, 99-4*i, 10))
	}
	assert.InDelta(t, 0.25, m.share, 0.05, "a quarter of what the server counts is this client's")
}

// TestModelShareLeavesOutAPairThatFoundAsMuchLeft: on a window not known
// to give back, a causal pair whose later answer found as much left as the
// earlier one shows a give-back or an unseen turn between them, by as much
// as the server counted there; it tells nothing of the others' spending.
// Counted as this client's request against nothing spent, every second
// step here pulled the share to 0.52 where the falls say a quarter
// (tollbooth's token bucket, read as a window of a second: one of four
// clients read 1 and paced at the whole rate).
func TestModelShareLeavesOutAPairThatFoundAsMuchLeft(t *testing.T) {
	m := testModel()
	m.observe(ans(1, 1, 0, 0.01, 100, 99, 10))
	left := 99.0
	for i := 1.0; i <= 10; i++ {
		if int(i)%2 == 1 {
			left -= 4 // this client sent 1, the server counted 4
		}
		m.observe(ans(1+i, 1+i, 0.1*i, 0.1*i+0.01, 100, left, 10))
	}
	require.Equal(t, kindUnknown, m.kind)
	assert.InDelta(t, 0.25, m.share, 0.05, "the falls' quarter")
}

func TestModelUnknownWindowIsSpreadToItsSoonestReset(t *testing.T) {
	// Four clients on a window of 100 per 10 s that nothing has shown to be
	// fixed yet. Their first requests took more than the steady rate:
	// what is left of this client's part is spread to the soonest reset,
	// not spent at its share of the steady rate and gone before the
	// window turns (a turn that finds nothing left to spend is never seen,
	// and a window from the first request whose resets are a second late
	// then runs a second longer each time). A window whose length the
	// server states ends by it, a turn seen or not, and a reset finer than
	// a second places its end: neither pace is bounded so.
	for _, tc := range []string{"read", "stated", "fine"} {
		m := testModel()
		obs := func(o observation) observation {
			switch tc {
			case "stated":
				o.q.Window = 10 * time.Second
			case "fine":
				o.coarse, o.delayed = false, false
			}
			return o
		}
		m.observe(obs(ans(1, 1, 0, 0.01, 100, 99, 10)))
		var p plan
		for i := 1.0; i <= 10; i++ {
			p = m.observe(obs(ans(1+i, 1+i, 0.1*i, 0.1*i+0.01, 100, 99-4*i, 10)))
		}
		require.Equal(t, kindUnknown, m.kind, tc)
		if tc != "read" {
			assert.InDelta(t, safety*m.steady()*m.share, p.rate, 1e-9, "%s: its share of the steady rate", tc)
			continue
		}
		left := p.capSeq(p.capAt) - 11
		assert.InDelta(t, left/(10-1.01), p.rate, 1e-9, "%v left over the 9 s to the reset", left)
		assert.Less(t, p.rate, safety*10*m.share, "under its share of the steady rate")
	}
	// A window read from whole-second resets as a second long places no end
	// finer than its slack (tollbooth's bucket says "1" all through): not
	// bounded so either.
	m := testModel()
	m.observe(ans(1, 1, 0, 0.001, 40, 39, 1))
	var p plan
	for i := 1.0; i <= 5; i++ {
		p = m.observe(ans(1+i, 1+i, 0.05*i, 0.05*i+0.001, 40, 39-3*i, 1))
	}
	require.Equal(t, kindUnknown, m.kind)
	require.Less(t, m.share, 1.0)
	assert.InDelta(t, safety*40*m.share, p.rate, 1e-9, "read a second: its share of the steady rate")
}

// Told the rate, the first window of a server not yet shown to be fixed
// is paced at it, not spread to its soonest reset: a reset rounded up reads
// the window up to a second long, and the told rate is the server's steady
// one, which spends the window no sooner than it ends. (express-rate-limit's
// legacy headers, 30 per 3 s, told 10/s: its first window read 3.7 s and
// was paced at 7.3/s, 112 of 120 served in 12 s.) Zero config, the read
// window is all there is: TestModelUnknownWindowIsSpreadToItsSoonestReset.
func TestModelToldFirstWindowPacedAtTheToldRate(t *testing.T) {
	m := newModel(float64(10*time.Minute), PaceEven, 10)
	var p plan
	for k := 1.0; k <= 5; k++ {
		at := 0.1 * (k - 1)
		p = m.observe(ans(k, k, at, at+0.001, 30, 30-k, 3.7))
	}
	require.Equal(t, kindUnknown, m.kind)
	assert.Greater(t, safety*10, 25/(3.7-0.401), "spread to the reset, it would go slower")
	assert.InDelta(t, safety*10, p.rate, 1e-9, "at the told rate's safety share")
}

func TestModelFarResetBoundedByMaxCooldown(t *testing.T) {
	m := testModel()
	// Remaining 1 with a reset ten years out.
	p := m.observe(ans(1, 1, 0, 0.01, 1000, 1, 10*365*24*3600))
	assert.LessOrEqual(t, float64(p.capEnd), 0.01*sec+float64(10*time.Minute)+2*sec, "the cap waits no longer than MaxCooldown")
	assert.GreaterOrEqual(t, p.rate, sec/float64(10*time.Minute), "nor does the pace")
}

func TestModelFirstBare429StartsSlowNotAtACrawl(t *testing.T) {
	m := testModel()
	o := ans(1, 1, 0, 0.01, -1, -1, 0)
	o.status = http.StatusTooManyRequests
	p := m.observe(o)
	assert.True(t, m.aimd && m.slowStart)
	assert.InDelta(t, slowStartRate, p.rate, 1e-9, "from a second's worth, doubling")
	assert.Greater(t, p.hold, o.arrived, "backs off")
	// Three seconds after the backoff (at most 3 s) the rate has doubled
	// six times.
	for i := 2.0; i < 10; i++ {
		p = m.observe(ans(i, i, 6, 6+0.01*i, -1, -1, 0))
	}
	assert.Greater(t, p.rate, 8*slowStartRate)
}

// Told 10/s by a server that states nothing, and refused at it: that rate
// is the server's edge (Django REST framework's sliding log of 30 per 3 s
// refuses the 31st request sent at exactly 10/s on a millisecond's jitter).
// The climb back stays a safety share under it, however long no 429 comes.
func TestModelToldRateRefusedStaysUnderIt(t *testing.T) {
	m, at, _ := refusedAtToldRate(time.Second)
	require.True(t, m.aimd)
	at += 1
	var p plan
	for i := 32.0; i < 200; i++ {
		p = m.observe(ans(i, i, at, at+0.002, -1, -1, 0))
		require.LessOrEqual(t, p.rate, safety*10+1e-9, "at %.1f s", at)
		at += 1 / p.rate
	}
	assert.InDelta(t, safety*10, p.rate, 1e-9, "back at the safety share of the told rate")
}

// refusedAtToldRate is a model told 10/s that served 30 at that rate, one
// every 0.1 s from 0, and then refused the 31st, sent at the instant it
// returns, with the given Retry-After (0: none); answers take a millisecond.
func refusedAtToldRate(retryAfter time.Duration) (m *model, at float64, p plan) {
	mod := newModel(float64(10*time.Minute), PaceEven, 10)
	m = &mod
	for i := 1.0; i <= 30; i++ {
		m.observe(ans(i, i, at, at+0.001, -1, -1, 0))
		at += 0.1
	}
	o := ans(31, 31, at, at+0.001, -1, -1, 0)
	o.status, o.q.RetryAfter = http.StatusTooManyRequests, retryAfter
	return m, at, m.observe(o)
}

func TestModelToldRateRefusedAtTheEdge(t *testing.T) {
	// Told 10/s, paced at it, and refused by a window with no headers at
	// its edge: the quota comes back within an interval, so no cut below
	// the safety share and no half-second backoff.
	m, at, p := refusedAtToldRate(0)
	assert.InDelta(t, safety*10, p.rate, 1e-9, "the safety share at once, not a cut")
	assert.Equal(t, 1, p.burst, "one at a time after the hold")
	hold := (float64(p.hold) - (at+0.001)*sec) / sec
	interval := 1 / (safety * 10)
	assert.GreaterOrEqual(t, hold, 2*interval, "one interval for the refusal a server counted, one for the retry")
	assert.LessOrEqual(t, hold, 4*interval)
	at += hold
	for i := 32.0; i < 60; i++ {
		p = m.observe(ans(i, i, at, at+0.001, -1, -1, 0))
		require.InDelta(t, safety*10, p.rate, 1e-9, "no dip after the hold, at %.2f s", at)
		at += interval
	}
	// A second 429 under the told rate is no edge: the rate is cut.
	o := ans(60, 60, at, at+0.001, -1, -1, 0)
	o.status = http.StatusTooManyRequests
	p = m.observe(o)
	assert.Less(t, p.rate, 0.8*safety*10)
	assert.GreaterOrEqual(t, (float64(p.hold)-(at+0.001)*sec)/sec, 0.75*minBackoff/sec)

	// Nor is a 429 before the told rate was served: the server may serve
	// less than it was told.
	fresh := newModel(float64(10*time.Minute), PaceEven, 10)
	o = ans(1, 1, 5, 5.001, -1, -1, 0)
	o.status = http.StatusTooManyRequests
	p = fresh.observe(o)
	assert.Less(t, p.rate, 0.8*safety*10)
}

// Told 10/s by a server that states nothing, and served at that rate: from
// its eighth answer on the pace is a hair under it, so that request n + 30
// of a sliding log of 30 per 3 s reaches it more than a window after
// request n, not at its edge (nearEdge). Not before, and not where the
// caller sends less than the rate told.
func TestModelToldRateKeptOffTheEdge(t *testing.T) {
	m := newModel(float64(10*time.Minute), PaceEven, 10)
	var p plan
	for i := 1.0; i <= 7; i++ {
		at := 0.1 * (i - 1)
		p = m.observe(ans(i, i, at, at+0.001, -1, -1, 0))
		require.NotEqual(t, toldEdge*10, p.rate, "answer %v: the rate told, at first", i)
	}
	p = m.observe(ans(8, 8, 0.7, 0.701, -1, -1, 0))
	assert.InDelta(t, toldEdge*10, p.rate, 1e-9, "served at the rate told: a hair under it")

	// Sent to at half the rate told: no edge to keep off.
	m = newModel(float64(10*time.Minute), PaceEven, 10)
	for i := 1.0; i <= 20; i++ {
		at := 0.2 * (i - 1)
		p = m.observe(ans(i, i, at, at+0.001, -1, -1, 0))
		require.NotEqual(t, toldEdge*10, p.rate, "answer %v at 5/s", i)
	}
}

func TestModelRetryAfterTakesPrecedence(t *testing.T) {
	m := testModel()
	o := ans(3, 3, 0, 0.01, 30, 0, 8)
	o.status, o.q.RetryAfter = http.StatusTooManyRequests, 2*time.Second
	p := m.observe(o)
	assert.InDelta(t, 2.01*sec, float64(p.hold), 1, "Retry-After, not the reset")
	assert.Equal(t, p.hold, p.capEnd, "the probe after the hold, not the cap's end")
}

func TestModelServerWithoutQuotaProbesOneAtATime(t *testing.T) {
	m := testModel()
	p := m.observe(ans(1, 1, 0, 0.01, -1, -1, 0))
	assert.True(t, math.IsInf(p.rate, 1))
	assert.True(t, p.alone, "one request at a time until the first refusal")
	o := ans(7, 7, 0.06, 0.07, -1, -1, 0)
	o.status = http.StatusTooManyRequests
	p = m.observe(o)
	assert.False(t, p.alone)
	assert.True(t, m.aimd)
}

func TestModelBucketSpendsWhatItHolds(t *testing.T) {
	m := testModel()
	m.observe(ans(1, 1, 0, 0.001, 30, 29, 1))
	m.observe(ans(15, 16, 0.2, 0.201, 30, 15, 2.2))
	m.observe(ans(25, 26, 0.45, 0.5, 30, 10, 3.5))
	p := m.observe(ans(36, 37, 1.55, 1.6, 30, 20, 2.6)) // 20 held, 10/s back
	require.True(t, m.bucket)
	// Tokens a bucket holds idle are lost once it is full: beyond a reserve
	// of 3 (a tenth of 30) they are spent over a second, on top of the pace.
	assert.Greater(t, p.rate, 0.95*m.avail+10, "rate %v with avail %v", p.rate, m.avail)
}

func TestModelToldBucketSpendsItsIdleTokens(t *testing.T) {
	// tollbooth told 10/s: a bucket of 10 that stays near full, its reset
	// always "1" (seconds until it refills), answers one after another.
	m := newModel(float64(10*time.Minute), PaceEven, 10)
	var p plan
	for i := range 20 {
		at := float64(i) * 0.105
		o := ans(float64(i+1), float64(i+1), at, at+0.001, 10, 9, 0)
		o.reset, o.resetOK, o.coarse, o.delayed = o.arrived.add(sec), true, true, true // "1", anchored to the arrival
		p = m.observe(o)
	}
	require.True(t, m.bucket, "a reset that moves on with the clock inside one window is a bucket's")
	assert.Equal(t, 8.0, p.spare, "told the rate, the 9 idle tokens beyond a reserve of 1 (a lone client) go at once")
	assert.Equal(t, 8, p.burst)
	assert.Equal(t, 10.0, p.rate, "the told rate, no safety share: the bucket refills at least that fast")
}

// The same bucket, zero config: paced at 95% of its rate, it stays at 9 of
// 10, its rate is never measured, and what comes back beyond its capacity
// is lost (tollbooth started with no burst: 88% used). What it holds beyond
// the reserve is spent over a second, on top of the pace.
func TestModelFullBucketSpendsItsIdleTokens(t *testing.T) {
	m := testModel()
	var p plan
	for i := range 20 {
		at := float64(i) * 0.105
		o := ans(float64(i+1), float64(i+1), at, at+0.001, 10, 9, 0)
		o.reset, o.resetOK, o.coarse, o.delayed = o.arrived.add(sec), true, true, true
		p = m.observe(o)
	}
	require.True(t, m.bucket)
	assert.InDelta(t, safety*10+8, p.rate, 1e-9, "the pace and the 8 beyond a reserve of 1 (a lone client) over a second")
}

func TestModelSharedWindowKeepsBackTheRoundingSpread(t *testing.T) {
	// With a few left, the four clients' random roundings, each on an
	// answer the others may have overtaken, would together overspend it:
	// twice √4 = 2 stay back in a window that does not refill, none of
	// them this client's, however the rounding draws.
	for seed := range uint64(64) {
		m := testModel()
		m.jitter = *rand.NewPCG(seed, seed)
		m.observe(ans(1, 1, 0, 0.01, 100, 99, 10))
		// Each step this client sends 1 while the server counts 4: a quarter.
		for i := 1.0; i <= 20; i++ {
			m.observe(ans(1+i, 1+i, 0.1*i, 0.1*i+0.01, 100, 99-4*i, 10))
		}
		require.InDelta(t, 0.25, m.share, 0.05)
		require.NotEqual(t, kindRefill, m.kind)
		for i, r := range []float64{3, 2, 1} {
			seq := 22 + float64(i)
			p := m.observe(ans(seq, seq, 2.1+0.1*float64(i), 2.11+0.1*float64(i), 100, r, 10))
			assert.Equal(t, seq, p.capSeq(p.capAt), "seed %d: %v left", seed, r)
		}
	}
}

func TestModelFullBucketAfterIdleIsNoFixedWindow(t *testing.T) {
	m := testModel()
	// tollbooth: 10 per second, the reset always "1". Spent to 0 at 0.5 s,
	// then held a second: a bucket refills in that second as a window would.
	m.observe(ans(1, 1, 0, 0.001, 10, 9, 1.001))
	m.observe(ans(10, 10, 0.5, 0.501, 10, 0, 1.501))
	m.observe(ans(11, 11, 1.6, 1.601, 10, 9, 2.601))
	assert.NotEqual(t, kindFixed, m.kind, "a refill the bucket's own rate explains shows no window")

	// A window refilled right after the last request of a well-used one is.
	m = testModel()
	m.observe(ans(1, 1, 0, 0.001, 30, 29, 3))
	m.observe(ans(29, 30, 2.9, 2.91, 30, 1, 3))
	m.observe(ans(31, 31, 3.05, 3.06, 30, 29, 6))
	assert.Equal(t, kindFixed, m.kind)
}

func TestModelDrainedBucketIsMeasuredNotForgotten(t *testing.T) {
	m := testModel()
	m.observe(ans(1, 1, 0, 0.001, 30, 29, 1))
	m.observe(ans(15, 16, 0.2, 0.201, 30, 15, 2.2))
	m.observe(ans(25, 26, 0.45, 0.5, 30, 10, 3.5))
	require.True(t, m.bucket)
	// Others drain it: over 1.1 s this client took 2 and the count fell by
	// 8. Its part is small, and measured as such: half its share of the
	// whole rate, not the pace of a client alone.
	p := m.observe(ans(27, 28, 1.55, 1.6, 30, 2, 3.6))
	full := m.srvLimit / (m.winLen / sec) // the bucket's whole refill rate
	assert.InDelta(t, m.share/2*full, m.avail, 1e-9)
	assert.Less(t, p.rate, 0.95*full*m.share)
	// Found full again, the refill goes to waste: the client may take at
	// least its share of the whole rate.
	m.observe(ans(29, 29, 4.5, 4.51, 30, 29, 4.61))
	assert.InDelta(t, m.share*full, m.avail, 1e-9)
}

// A log that others share gives back their requests too: while they wait,
// this client sees more come back than its spending explains, a refill at
// a rate, and took it for its own (four clients on Flask-Limiter's moving
// window measured 14.8/s between them, of its 10, and spent what was left
// at that: 3–10% refused in the kit, 6–7 a run on the real one). What comes
// back to a client is at most its share of the server's whole rate.
func TestModelSharedRefillIsAtMostItsShare(t *testing.T) {
	m := testModel()
	m.observe(ans(1, 1, 0, 0.001, 30, 29, 1))
	m.observe(ans(15, 16, 0.2, 0.201, 30, 15, 2.2))
	m.observe(ans(25, 26, 0.45, 0.5, 30, 10, 3.5))
	m.observe(ans(27, 28, 1.55, 1.6, 30, 2, 3.6))
	require.True(t, m.bucket)
	require.Less(t, m.share, 1.0)
	// Over 1.1 s the count rose from 2 to 25 while this client took 2: the
	// others' requests of a window ago, given back.
	m.observe(ans(30, 30, 2.65, 2.7, 30, 25, 4.7))
	full := m.srvLimit / (m.winLen / sec)
	assert.LessOrEqual(t, m.avail, m.share*full+1e-9, "share %.2f of %.1f/s", m.share, full)
}

func TestModelSlidingWindowShownWithOthers(t *testing.T) {
	// httprate with four clients: this one takes a quarter of what the
	// server counts, 30 per 3 s windows.
	m := testModel()
	m.observe(ans(1, 1, 0, 0.01, 30, 29, 3))
	for i := 1.0; i <= 6; i++ {
		m.observe(ans(1+i, 1+i, 0.4*i, 0.4*i+0.01, 30, 29-4*i, 3))
	}
	require.InDelta(t, 0.25, m.share, 0.05)
	require.Equal(t, kindUnknown, m.kind)
	// Just after the turn, the new window is born with 3 left: the old
	// window's count, not what the others could have taken in 0.1 s at
	// their share of 10/s.
	m.observe(ans(8, 8, 3.1, 3.11, 30, 3, 6))
	assert.Equal(t, kindRefill, m.kind)
}

func TestModelSlidingWindowOfFiveShownAtItsCrossing(t *testing.T) {
	// A lone client on a sliding-window counter of 5 per 1 s, resets
	// truncated (the kit's, 1–6 ms answers), paced at its steady rate
	// after a first window spent at once. Each probe after a reset finds
	// the old window's count still there: a fixed window would have been
	// born full. With a limit of five, the counts never reached eight to
	// tell a share by, and the crossing was then not read: each window
	// held to its latest end, 3 of 5 spent a second (50–62% used).
	for _, tc := range []struct {
		name    string
		answers []observation
	}{{
		name: "born empty, the server's second at 0",
		answers: []observation{
			ans(1, 1, 0.000, 0.002, 5, 4, 1), ans(2, 2, 0.002, 0.006, 5, 3, 1), ans(3, 3, 0.213, 0.215, 5, 2, 1),
			ans(4, 4, 0.423, 0.426, 5, 1, 1), ans(5, 5, 0.634, 0.637, 5, 0, 1),
			ans(6, 6, 2.002, 2.003, 5, 4, 3), ans(7, 7, 2.003, 2.008, 5, 3, 3), ans(8, 8, 2.213, 2.216, 5, 2, 3),
			ans(9, 9, 2.423, 2.428, 5, 1, 3), ans(10, 10, 2.634, 2.639, 5, 0, 3),
			ans(11, 11, 3.009, 3.012, 5, 0, 4), // counted with the last window's 5, weighed
		},
	}, {
		// One short of what a fixed window's probe would find: once two
		// were allowed for answers counted out of order, though nothing
		// else was in flight to overtake it.
		name: "born with one left, the server's second at 300 ms",
		answers: []observation{
			ans(1, 1, 0.002, 0.002, 5, 4, 0), ans(2, 5, 0.002, 0.005, 5, 2, 0), ans(4, 5, 0.002, 0.005, 5, 0, 0),
			ans(3, 5, 0.002, 0.005, 5, 1, 0), ans(5, 5, 0.002, 0.006, 5, 3, 0),
			ans(6, 6, 1.002, 1.003, 5, 2, 1), ans(7, 7, 1.003, 1.008, 5, 1, 1), ans(8, 8, 1.214, 1.217, 5, 1, 1),
			ans(9, 9, 1.425, 1.429, 5, 1, 2), ans(10, 10, 1.635, 1.641, 5, 1, 2), ans(11, 11, 1.846, 1.848, 5, 0, 2),
			ans(12, 12, 2.432, 2.434, 5, 1, 3),
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			m := testModel()
			for _, o := range tc.answers {
				m.observe(o)
			}
			assert.Equal(t, kindRefill, m.kind)
		})
	}
}

func TestModelWindowOfTenBornShortMayBeOthers(t *testing.T) {
	// A window of 10 per 1 s that this client spent alone, as far as its
	// counts show; the next window's first answer, to a probe alone, finds
	// 6 left: three counted before it. A sliding window's old count, or
	// other clients' requests that no count has shown yet. On a limit of
	// ten, two are left to the others until their share is seen: taken
	// for a sliding window's, four clients on NestJS's log of 10 per 1 s
	// drew 4.8 429s a 12 s run, against 3.2.
	m := testModel()
	for i := 1.0; i <= 9; i++ {
		m.observe(ans(i, i, 0.1*(i-1), 0.1*(i-1)+0.01, 10, 10-i, 1))
	}
	require.True(t, m.shareSeen)
	require.Equal(t, 1.0, m.share)
	m.observe(ans(10, 10, 1.05, 1.06, 10, 6, 2))
	assert.NotEqual(t, kindRefill, m.kind)
}

func TestModelLogResetWhenEmptyIsNoGCRA(t *testing.T) {
	// A lone client on a sliding log of 60 per 10 s whose reset is when
	// the log will be empty, a window after its newest request, rounded up
	// (the kit's, Flask-Limiter's). Its first window spent, a probe after
	// the first request left the log is told one left, with a reset a
	// window on: before the last answer's, so read as GCRA, whose reset is
	// when its bucket is full again. But its first answer, told 59 left,
	// had its reset a window on too, where GCRA's, one spent, would have
	// been a sixtieth of that: the next answer read as GCRA's shows a log.
	// Stated (IETF's w) or not, the same.
	for _, window := range []time.Duration{0, 10 * time.Second} {
		t.Run(fmt.Sprintf("window stated %v", window), func(t *testing.T) {
			m := testModel()
			obs := func(o observation) {
				o.q.Window = window
				m.observe(o)
			}
			for i := 1.0; i <= 60; i++ {
				sent := 0.08 * (i - 1)
				obs(ans(i, i, sent, sent+0.003, 60, 60-i, math.Ceil(sent+10.002)))
			}
			obs(ans(61, 61, 10.008, 10.010, 60, 1, 21))
			require.True(t, m.fullAt, "a reset before the last one could pass")
			obs(ans(62, 62, 10.010, 10.016, 60, 0, 21))
			assert.False(t, m.fullAt, "a reset a window on, as with 59 left")
			// The log gives back the first window's requests, 15 left,
			// and its reset is still a window on. GCRA's would be 2.7 s
			// sooner with a quarter of its limit more left: read so, the
			// window was 14 s, and the cap grew at a bucket's rate where
			// the log gave nothing back (a 429 in each of the first
			// windows of Flask-Limiter's 60 per 10 s; of the kit's log
			// in IETF's dialect, w stated, two to four in 30 s).
			obs(ans(63, 63, 11.840, 11.845, 60, 15, 22))
			assert.False(t, m.fullAt, "a log's reset, not GCRA's")
			assert.InDelta(t, 10*sec, m.winLen, 1*sec, "the log's window")
		})
	}
}

func TestModelRefillCountsAsSpentInTheShare(t *testing.T) {
	// Four clients on a sliding window of 100 per 10 s whose last window
	// counted 98 (its first answer, its own request counted too: 1 left),
	// so 9.8/s comes back. Each 0.4 s this one sends 1 and the others 3,
	// and the window gives about 4 back: the count holds. What came back
	// was spent too: this client's share is a quarter, not all of it.
	m := testModel()
	m.observe(ans(1, 1, 0, 0.01, 100, 1, 10))
	m.observe(ans(2, 2, 0.4, 0.41, 100, 2, 10)) // a rise: refilling
	require.Equal(t, kindRefill, m.kind)
	for i := 1.0; i <= 20; i++ {
		m.observe(ans(2+i, 2+i, 0.4+0.4*i, 0.41+0.4*i, 100, 2, 10))
	}
	assert.InDelta(t, 0.25, m.share, 0.02)
}

// A sliding window gives back what its last window counted, not the limit
// rate: a lone client that sent 5 a second of a 10/s window's quota sees 5
// a second come back, and that is its own spending, not the others' (at the
// limit rate its share fell to 0.51 in 30 s, and so its pace). The cap
// grows at that give-back too: fiber's sliding window serves 7.5 of 10 a
// second, and a cap grown at 9.5/s drew a 429.
func TestModelSlidingGiveBackIsTheLastWindowsCount(t *testing.T) {
	m := testModel()
	// 30 per 3 s; the last window counted 15: 15 left at this one's start.
	m.observe(ans(1, 1, 0, 0.01, 30, 15, 3))
	m.observe(ans(2, 2, 0.4, 0.41, 30, 16, 3)) // a rise: refilling
	require.Equal(t, kindRefill, m.kind)
	var p plan
	for i := 1.0; i <= 60; i++ {
		// 5/s out, 5/s back: the count holds, whichever window it is in.
		t0 := 0.4 + 0.2*i
		p = m.observe(ans(2+i, 2+i, t0, t0+0.01, 30, 16, 3*math.Ceil((t0+0.01)/3)))
	}
	assert.Equal(t, 1.0, m.share, "alone")
	assert.InDelta(t, safety*5/sec, p.capGrow, 0.5/sec, "the cap grows at the give-back")
	// The count held while a request went out every 0.2 s: it came back
	// between any two answers, at no one phase of a whole-second clock,
	// so the cap grows from the answer at 12.41 s, not from a tick.
	// (TestModelSlidingCapGrowsFromTheNextTick has a server that ticks.)
	assert.True(t, m.offTick, "gave back between ticks")
	assert.InDelta(t, 12.41*sec, float64(p.capAt), 1e6, "grows from %v", time.Duration(p.capAt))
}

func TestModelSlidingShareLeavesTheFirstRequestInItsWindow(t *testing.T) {
	// A lone client sends 4 a second to a sliding-window counter of 5 per
	// 1 s that keeps to whole seconds: each window weighs the last one's 4
	// as it passes, and each answer finds nothing left. The first answer
	// of a window finds its own request counted with the last window's:
	// only 4 of those 5 leave in this window, which is what this client
	// sends. Taken for 5, its share read 4/5 of itself.
	m := testModel()
	seq := 0.0
	for w := 0.0; w < 12; w++ {
		for i := range 4 {
			seq++
			tau := 0.01 + 0.25*float64(i)
			count := float64(i + 1) // this window's, its own among them
			if w > 0 {
				count += 4 * (1 - tau) // the last window's, weighed
			}
			m.observe(ans(seq, seq, w+tau, w+tau+0.002, 5, math.Floor(5-count), w+1))
		}
	}
	require.True(t, m.sliding(), "a sliding window")
	require.True(t, m.shareSeen)
	assert.Equal(t, 1.0, m.share, "alone")
}

// fiber's sliding window reads a whole-second clock: its Remaining comes
// back only as a second ticks, and a reset of n seconds was counted from
// the tick n before the window's end. The cap grows from the next tick,
// not from the answer: a request between ticks, past what the last answer
// said, is refused (and fiber counts it, and holds a whole window).
func TestModelSlidingCapGrowsFromTheNextTick(t *testing.T) {
	m := testModel()
	m.observe(ans(1, 1, 0, 0.001, 30, 29, 3.001))    // "3"
	m.observe(ans(30, 30, 2.9, 2.901, 30, 0, 3.901)) // "1"
	m.observe(ans(31, 31, 3.05, 3.051, 30, 0, 6.051))
	require.Equal(t, 1, m.crossings, "a new window")
	p := m.observe(ans(32, 32, 4.1, 4.101, 30, 9, 6.101)) // "2", and a third of the old 30 back
	require.Equal(t, kindRefill, m.kind)
	assert.InDelta(t, safety*10/sec, p.capGrow, 0.01/sec, "the last window counted 30")
	assert.InDelta(t, 5.052*sec, float64(p.capAt), 1e6, "grows from the tick after 4.1 s, not from %v", time.Duration(p.capAt))
	assert.Equal(t, 41.0, p.capSeq(secs(5.05)), "nothing more before it")

	// The next window's first answer, "3": its own tick was the window's
	// start, and the next is a second on.
	p = m.observe(ans(60, 60, 6.06, 6.061, 30, 0, 9.061))
	assert.InDelta(t, 7.062*sec, float64(p.capAt), 1e6, "grows from %v", time.Duration(p.capAt))
}

// slidingWindowOfASecond is a model that has seen a window of 10 per 1 s,
// resets "1" all through, spent and then born short at 2 s: a sliding
// window's.
func slidingWindowOfASecond(t *testing.T) model {
	t.Helper()
	m := testModel()
	m.observe(ans(1, 1, 0, 0.001, 10, 9, 1.001))
	m.observe(ans(10, 10, 0.85, 0.851, 10, 0, 1.851))
	m.observe(ans(11, 11, 2.0, 2.001, 10, 5, 3.001)) // born short
	require.True(t, m.sliding())
	return m
}

// A sliding window of a second on a whole-second clock (fiber's) counts
// the last whole second and this one, and says "1" at every answer: no
// answer places its turns, which come unseen at every tick. The quota that
// came back between two answers places them, once it has come back twice
// at one phase. (Grown from each answer, fiber's cap of 10 per 1 s drew a
// 429 and a second's Retry-After two or three times in 12 s.)
func TestModelWholeSecondTicksArePlacedByWhatCameBack(t *testing.T) {
	m := slidingWindowOfASecond(t)
	m.observe(ans(16, 16, 2.84, 2.841, 10, 0, 3.841))
	m.observe(ans(17, 17, 3.1, 3.101, 10, 4, 4.101)) // four came back: a tick in (2.84, 3.101]
	p := m.observe(ans(18, 18, 3.15, 3.151, 10, 3, 4.151))
	assert.InDelta(t, 3.151*sec, float64(p.capAt), 1e6, "once is no pattern: grows from %v", time.Duration(p.capAt))

	m.observe(ans(21, 21, 3.4, 3.401, 10, 0, 4.401))
	m.observe(ans(22, 22, 4.05, 4.051, 10, 3, 5.051)) // again, in (3.84, 4.051]
	require.True(t, m.wholeSecondTicks())
	p = m.observe(ans(23, 23, 4.1, 4.101, 10, 2, 5.101))
	assert.InDelta(t, 5.051*sec, float64(p.capAt), 1e6, "the next tick at the latest: %v", time.Duration(p.capAt))
	p = m.observe(ans(25, 25, 4.5, 4.501, 10, 0, 5.501))
	assert.False(t, m.bucket, "a reset that reads 1 all through moves on with the clock: no bucket")
	assert.InDelta(t, 5.051*sec, float64(p.capAt), 1e6, "grows from %v", time.Duration(p.capAt))
	assert.Equal(t, 25.0, p.capSeq(secs(5.0)), "nothing before it")

	// Quota back between the ticks: a server that gives back at any phase.
	p = m.observe(ans(26, 26, 4.6, 4.601, 10, 2, 5.601))
	assert.False(t, m.wholeSecondTicks())
	assert.InDelta(t, 4.601*sec, float64(p.capAt), 1e6, "grows from %v", time.Duration(p.capAt))
}

// A window of a second that a single rise has placed a tick in may be a
// whole-second clock's (fiber's, which gives back only at its ticks) or a
// sliding log's (nest's, which gives back each request a second after it
// went): at nothing left, one probe goes when a log would give back this
// client's oldest request it holds, not at the next tick. Admitted, the
// server gives back between ticks, and the cap grows from that log's
// returns from then on. (Held to the ticks, nest's log of 10 per 1 s
// served 62 of 120 in 12 s; 98 with the probe.)
func TestModelLogOfASecondIsProbedBeforeTheNextTick(t *testing.T) {
	// 10 per 1 s stated, "1" all through; spent at 10/s after a burst of
	// two, and probed at the window's end: two came back, a tick in
	// (0.8, 1.004], and then nothing left.
	setup := func() model {
		m := testModel()
		stated := func(o observation) observation { o.q.Window = time.Second; return o }
		m.observe(stated(ans(1, 1, 0, 0.001, 10, 9, 1.001)))
		m.observe(stated(ans(2, 2, 0.001, 0.002, 10, 8, 1.002)))
		for seq := 3.0; seq <= 10; seq++ {
			at := 0.1*(seq-2) + 0.001
			m.observe(stated(ans(seq, seq, at-0.001, at, 10, 10-seq, at+1)))
		}
		m.observe(stated(ans(11, 11, 1.002, 1.004, 10, 1, 2.004)))
		require.True(t, m.sliding())
		require.True(t, m.ticked)
		p := m.observe(stated(ans(12, 12, 1.004, 1.006, 10, 0, 2.006)))
		// The request sent at 0.1 comes back from a log at 1.102 at the
		// latest (a second and a latency on), the next tick at 1.8 at the
		// soonest: the cap ends there, and one request goes alone.
		assert.True(t, p.tickProbe)
		assert.InDelta(t, 1.102*sec, float64(p.capEnd), 1e3, "the probe at %v", time.Duration(p.capEnd))
		assert.Less(t, p.capSeq(secs(1.1019)), 13.0, "nothing before it")
		return m
	}
	stated := func(o observation) observation { o.q.Window = time.Second; return o }

	m := setup()
	p := m.observe(stated(ans(13, 13, 1.102, 1.104, 10, 0, 2.104))) // admitted, and nothing left after it
	assert.True(t, m.tickProbed)
	assert.True(t, m.offTick, "gave back between ticks")
	assert.Less(t, p.capSeq(secs(1.2)), 14.0, "the next when the log gives back 0.2's")
	assert.GreaterOrEqual(t, p.capSeq(secs(1.222)), 14.0)

	// On a whole-second clock the probe is refused: the ticks hold, and no
	// probe goes again.
	m = setup()
	m.observe(refused(stated(ans(13, 13, 1.102, 1.104, 10, 0, 2.104)), time.Second))
	assert.True(t, m.tickProbed)
	assert.False(t, m.offTick)
	twelve := stated(ans(12, 12, 1.004, 1.006, 10, 0, 2.006))
	assert.Equal(t, never, m.probeTick(twelve, secs(2.006)), "no probe again")
	m.tickProbed = false
	assert.Equal(t, secs(1.102), m.probeTick(twelve, secs(2.006)), "but for the one that went")
}

// A window whose reset moves on with every request is probed a window less
// a second after its first answer, for a window read from whole-second
// resets may be a second long; a stated one is exact, and its log gives
// that first request back a whole window after it went, not before.
func TestModelStatedWindowWithAMovingResetIsProbedAtItsLength(t *testing.T) {
	m := testModel()
	var p plan
	for seq := 1.0; seq <= 30; seq++ { // 30 per 3 s stated, paced over 1.74 s
		sent := 0.06 * (seq - 1)
		o := ans(seq, seq, sent, sent+0.002, 30, 30-seq, sent+3.002)
		o.q.Window = 3 * time.Second
		p = m.observe(o)
	}
	require.True(t, m.bucket, "its reset moved on with the clock")
	assert.InDelta(t, 3.004*sec, float64(p.capEnd), 1e6, "a window and a latency after the first answer: %v", time.Duration(p.capEnd))
	last := ans(30, 30, 1.74, 1.742, 30, 0, 4.742)
	assert.InDelta(t, 3.002*sec, m.logHold(last), 1e6, "a log holds each request a whole stated window")
}

// A server that states what is left and nothing else has its window
// bounded by the time between two turns; a steady pace shows it: a sliding
// window sent to at p counts p·W, and HAProxy's 10 per 1 s, read as 2 s,
// paced at 4.75/s, had 5 left for good (48.7% of it used in the kit).
func TestModelSteadyPaceShowsTheWindow(t *testing.T) {
	m := testModel()
	m.observe(ans(1, 1, 0, 0.001, -1, 9, 0))
	m.kind, m.winLen, m.srvLimit = kindRefill, 2*sec, 10
	for seq := 2.0; seq <= 30; seq++ { // 4.75/s, 5 left each time: 5 counted in the last 1.05 s
		sent := 0.21 * (seq - 1)
		m.observe(ans(seq, seq, sent, sent+0.001, -1, 5, 0))
	}
	assert.InDelta(t, 1.05*sec, m.winLen, 0.1*sec, "window %v", time.Duration(m.winLen))

	// Half or more left: a bucket sent to below its refill shows nothing.
	m = testModel()
	m.observe(ans(1, 1, 0, 0.001, -1, 9, 0))
	m.kind, m.winLen, m.srvLimit = kindRefill, 2*sec, 10
	for seq := 2.0; seq <= 30; seq++ {
		sent := 0.21 * (seq - 1)
		m.observe(ans(seq, seq, sent, sent+0.001, -1, 8, 0))
	}
	assert.Equal(t, 2*sec, m.winLen)
}

// A burst in the span of a steady pace is counted only while the window
// holds it: HAProxy's request rate of 10 per 1 s, read as 2 s from its first
// turn, was sent three at once and then 4.75/s, and the first stretch's
// reading, the burst in the server's count and spread over the whole span,
// was 1.56 s. Here a sliding log of 10 per 1 s counts them exactly, and that
// reading was 1.23 s.
func TestModelSteadyPaceAfterABurstShowsTheWindow(t *testing.T) {
	m := testModel()
	m.observe(ans(1, 1, 0, 0.001, -1, 9, 0))
	m.kind, m.winLen, m.srvLimit = kindRefill, 2*sec, 10
	sent := []float64{0}
	for at := 0.21; at < 7; at += 0.21 {
		sent = append(sent, at)
		if len(sent) == 13 {
			sent = append(sent, at, at, at) // three at once, at 2.52 s
		}
	}
	for i, at := range sent[1:] {
		counted := 0.0 // by a log of 1 s, this one included
		for _, s := range sent[:i+2] {
			if s > at-1 {
				counted++
			}
		}
		seq := float64(i + 2)
		m.observe(ans(seq, seq, at, at+0.001, -1, 10-counted, 0))
		if m.winLen < 2*sec {
			break // the first stretch's reading
		}
	}
	assert.InDelta(t, 1.0*sec, m.winLen, 0.1*sec, "window %v", time.Duration(m.winLen))
	assert.True(t, m.fit.shown)
}

// A sliding window gives back what it counts: where a steady pace showed
// its window (no reset states its turns), what is counted now, the limit
// less what is left, comes back over the next window, not what was missing
// at the last turn seen, which HAProxy's frequency counter showed at 2 s and
// never again: told 0 left at 9.2 s, its 10 per 1 s was probed a second
// on, and again at 11 s (73 of 120 served in 12 s). Refused at that pace,
// the server is no such window after all (a token bucket sent to just under
// its refill keeps as much left as one would: Bucket4j's GCRA of 5 per 1 s,
// read as a window of 0.61 s, drew a 429 in 30% of its answers grown so).
func TestModelFittedWindowGivesBackWhatItCounts(t *testing.T) {
	m := testModel()
	m.kind, m.refilled, m.srvLimit, m.winLen, m.winFirst, m.crossings = kindRefill, true, 10, sec, 9, 1
	assert.InDelta(t, 1.0, m.giveBack(secs(9), 0, 0)*sec, 1e-9, "what the turn showed missing")
	m.fit.shown = true
	assert.InDelta(t, 10.0, m.giveBack(secs(9), 0, 0)*sec, 1e-9, "all counted now")
	assert.InDelta(t, 9.0, m.giveBack(secs(9), 1, 0)*sec, 1e-9, "all counted now")

	m.fitPace(refused(ans(50, 50, 9, 9.001, -1, 0, 0), 0), 0)
	assert.True(t, m.fit.refuted)
	assert.InDelta(t, 1.0, m.giveBack(secs(9), 0, 0)*sec, 1e-9, "refuted")
}

// A rise places a tick of the server's clock between the earlier request's
// send and the later answer; a tick seen before, moved on by whole seconds,
// narrows it down where one second fits, and where none does (beyond a
// clock's drift) the server gives back between ticks. A wide span that
// meets the tick one second on is no miss: fiber's sliding window of 10
// per 1 s, after a hold, rose across (7.640, 8.536] with the tick seen in
// (6.796, 7.009], and its moving reset was then read as a bucket's, two
// 429s more a run.
func TestModelTicksSeenMeetAWholeNumberOfSecondsOn(t *testing.T) {
	for _, tc := range []struct {
		name           string
		lo, hi         float64 // the new rise's span
		fits           int
		off            bool
		tickLo, tickHi float64 // the tick as placed after it
	}{
		{"one second on, narrowed", 1.0, 1.9, 1, false, 1.1, 1.3},
		{"a wide span, one second on", 0.944, 1.84, 1, false, 1.1, 1.3},
		{"three seconds on", 3.2, 3.25, 1, false, 3.2, 3.25},
		{"two seconds fit: nothing shown", 1.2, 2.15, 0, false, 0.1, 0.3},
		{"a near miss, within the drift", 1.31, 1.5, 1, false, 1.31, 1.5},
		{"between the ticks", 1.5, 1.9, 0, true, 1.5, 1.9},
		{"a second or more apart: no tick", 0.5, 1.6, 0, false, 0.1, 0.3},
		// A clock drifts from one second to the next, not within one: a
		// rise just after the span is another give-back, 0.2 s on.
		{"just after the tick seen", 0.3, 0.5, 0, true, 0.3, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testModel()
			m.learnTick(answer{seq: 1, sent: secs(0.1)}, observation{seq: 2, arrived: secs(0.3)})
			m.learnTick(answer{seq: 5, sent: secs(tc.lo)}, observation{seq: 6, arrived: secs(tc.hi)})
			assert.Equal(t, tc.fits, m.tickFits, "fits")
			assert.Equal(t, tc.off, m.offTick, "off the ticks")
			assert.InDelta(t, tc.tickLo*sec, float64(m.tickLo), 1e3, "tick from %v", time.Duration(m.tickLo))
			assert.InDelta(t, tc.tickHi*sec, float64(m.tickHi), 1e3, "tick to %v", time.Duration(m.tickHi))
		})
	}
}

// A rise over the request whose answer showed the tick seen came after that
// tick: however the two spans overlap, it is a later one. A probe answered
// just after a sliding log gave back (nest's), and the next request's rise
// over it, were taken for one tick: the log was held to ticks it does not
// have, half its quota used.
func TestModelRiseAfterTheTicksRequestIsALaterTick(t *testing.T) {
	m := testModel()
	m.learnTick(answer{seq: 10, sent: secs(0.947)}, observation{seq: 11, arrived: secs(1.056)})
	m.learnTick(answer{seq: 11, sent: secs(1.053)}, observation{seq: 12, arrived: secs(1.164)})
	assert.Zero(t, m.tickFits, "not the same tick")
	assert.True(t, m.offTick, "a give-back 0.1 s after the last")

	// Over it, but across most of a second: it meets the tick seen and
	// the next, and shows nothing.
	m = testModel()
	m.learnTick(answer{seq: 10, sent: secs(0.947)}, observation{seq: 11, arrived: secs(1.056)})
	m.learnTick(answer{seq: 11, sent: secs(1.0)}, observation{seq: 12, arrived: secs(1.95)})
	assert.Zero(t, m.tickFits, "wide: no fit")
	assert.False(t, m.offTick)

	// The same spans, the later rise over another request: it may have
	// been counted before the tick, which may then be the same.
	m = testModel()
	m.learnTick(answer{seq: 10, sent: secs(0.947)}, observation{seq: 11, arrived: secs(1.056)})
	m.learnTick(answer{seq: 12, sent: secs(1.053)}, observation{seq: 13, arrived: secs(1.164)})
	assert.Equal(t, 1, m.tickFits)
	assert.False(t, m.offTick)
}

// A window of a second whose resets read "1" all through moves its reset on
// with the clock whatever it is; a bucket gives back as it does, a sliding
// window whose turn went unseen gives back nothing before its next tick.
// The kit's fiber sliding window of 10 per 1 s, sent nothing for 0.94 s,
// had one left before and after: no bucket, where one would have given
// back nine.
func TestModelWindowOfASecondThatGaveNothingBackIsNoBucket(t *testing.T) {
	m := slidingWindowOfASecond(t)
	m.observe(ans(15, 15, 2.84, 2.841, 10, 1, 3.841))
	m.observe(ans(16, 16, 3.78, 3.781, 10, 1, 4.781))
	assert.False(t, m.bucket, "nothing came back in 0.94 s")
	assert.True(t, m.sliding())

	// Spent at 10/s with one left each time, for 1.5 s: as much came back
	// as went, what a bucket at its limit rate gives back (tollbooth's).
	m = slidingWindowOfASecond(t)
	for i := range 9 {
		at := 2.741 + 0.1*float64(i)
		m.observe(ans(float64(15+i), float64(15+i), at-0.001, at, 10, 1, at+1))
	}
	assert.True(t, m.bucket, "its reset moved on with the clock as it refilled")
}

// Every answer of a window places its end within a slack of its own reset,
// so the end is in all of those spans: the latest end is the soonest reset
// plus the slack. gofiber's whole-second resets went from 2 to 1 at 2.0 s;
// its window's last answer, at 2.84 s, says 1 (3.84 s), and was probed at
// its reset plus a second, 0.84 s after the soonest allowed.
func TestModelWindowEndIsTheSoonestOfItsResets(t *testing.T) {
	m := testModel()
	m.observe(ans(1, 1, 0, 0.001, 30, 29, 3))
	m.observe(ans(20, 20, 1.9, 1.901, 30, 10, 3.9))  // "2"
	m.observe(ans(21, 21, 2.0, 2.001, 30, 9, 3.001)) // "1": the soonest
	p := m.observe(ans(30, 30, 2.84, 2.841, 30, 0, 3.841))
	assert.InDelta(t, 4.002*sec, float64(p.capEnd), 1e6, "cap end %v", time.Duration(p.capEnd))
}

// A stated window (IETF w, a policy) ends no later than its length after
// its first answer, even where a reset rounded up says up to a second more:
// express-rate-limit, whose windows tick from the first request after the
// last one ended, was probed 0.2–0.9 s late at each window. The probe then
// sent before the old reset and answered from a full window is a new
// window, not a rise inside the old one (a sliding window).
func TestModelStatedWindowEndsByItsLength(t *testing.T) {
	m := testModel()
	stated := func(o observation) observation { o.q.Window = 3 * time.Second; return o }
	m.observe(stated(ans(1, 1, 0, 0.01, 30, 29, 3)))
	p := m.observe(stated(ans(30, 30, 2.85, 2.86, 30, 0, 3.86))) // rounded up from 0.15 s
	assert.InDelta(t, 3.02*sec, float64(p.capEnd), 1e6, "cap end %v", time.Duration(p.capEnd))
	m.observe(stated(ans(31, 31, 3.02, 3.03, 30, 29, 6.03)))
	assert.NotEqual(t, kindRefill, m.kind, "a new window")
	assert.Equal(t, 1, m.crossings)
}

// A fixed window of 10 per 1 s opened by the first request after the last
// one ended, its resets Unix seconds rounded up: a window opened at 2.001 s
// ends at 3.001, and its reset reads 4, two seconds from its first answer.
// The next window, opened at 3.051 s, resets at 5: a jump of a second, no
// shorter than a window of whole seconds. Read as 2 s, each window was paced
// at half its rate and left 2 of 10 unspent at its turn: 77% used in the kit.
func TestModelResetJumpShortensAWindowRead(t *testing.T) {
	m := testModel()
	m.observe(ans(1, 1, 2.001, 2.004, 10, 9, 4))
	m.observe(ans(10, 10, 2.9, 2.903, 10, 0, 4))
	assert.Equal(t, 2*sec, m.winLen, "read from the first answer: up to a second long")
	m.observe(ans(11, 11, 3.051, 3.055, 10, 9, 5))
	assert.Equal(t, 2*sec, m.winRead)
	assert.Equal(t, 1*sec, m.winLen, "the jump between the two windows' resets")
}

// The same, its resets placed on the monotonic clock, which drifts from
// the wall clock the server counts in by some parts per million: the
// second reset lies 10 ns short of a second after the first. The jump is
// still a second (express-rate-limit's legacy headers, 10 per 1 s, read
// as 2 s so: 78–84% used; with the jump rounded, 113–116 of 120 served).
func TestModelResetJumpIsWholeSecondsOnADriftingClock(t *testing.T) {
	m := testModel()
	m.observe(ans(1, 1, 2.001, 2.004, 10, 9, 4))
	m.observe(ans(10, 10, 2.9, 2.903, 10, 0, 4))
	o := ans(11, 11, 3.051, 3.055, 10, 9, 5)
	o.reset -= 10
	m.observe(o)
	assert.Equal(t, 1*sec, m.winLen, "the jump between the two windows' resets, to its whole seconds")
}

// A fixed window of 30 per 3 s that keeps to the server's clock, 300 ms
// past its second, its resets Unix seconds truncated: windows end at 3.3,
// 6.3, 9.3 s and state 3, 6, 9. Its first answer came from a probe 0.7 s
// into a window: read as 2 s. The probe at its reset was refused, so the
// window lasted longer than that; read so, each window was probed at its
// reset and refused (2.7% of answers in the kit).
func TestModelWindowOutlastingItsReadingIsLonger(t *testing.T) {
	m := testModel()
	m.observe(ans(1, 1, 1.0, 1.002, 30, 29, 3))
	require.Equal(t, 2*sec, m.winLen, "read 0.7 s into the window")
	m.observe(ans(30, 30, 2.9, 2.903, 30, 0, 3))
	m.observe(refused(ans(31, 31, 3.008, 3.01, 30, 0, 3), 0))
	assert.Greater(t, m.winLen, 2*sec, "a request sent 2.006 s after its first answer was counted in it")
	m.observe(ans(32, 32, 4.002, 4.004, 30, 29, 6))
	p := m.observe(ans(61, 61, 5.9, 5.903, 30, 0, 6))
	assert.GreaterOrEqual(t, p.capEnd, secs(6.3), "the next window is not probed before its end: cap end %v", time.Duration(p.capEnd))
}

// A sliding counter of 10 per 1 s on the server's clock, its windows
// ending 700 ms past each second, its Unix resets truncated: every reset
// has passed when its answer comes (1 at 1.004 s, 2 at 2.003 s), so none
// reads a window. Never paced, each window was spent at its probe: 54%
// used in the kit. Two windows' resets jump by their length: 88%.
func TestModelResetsPassedOnArrivalJumpByTheWindow(t *testing.T) {
	m := testModel()
	m.observe(ans(1, 1, 0, 0.002, 10, 9, 0))
	m.observe(ans(10, 10, 0.002, 0.008, 10, 0, 0))
	m.observe(ans(11, 11, 1.001, 1.004, 10, 2, 1))
	require.Zero(t, m.winLen, "no reset read a window")
	m.observe(ans(12, 12, 1.004, 1.007, 10, 1, 1))
	p := m.observe(ans(14, 14, 2.002, 2.003, 10, 6, 2))
	assert.Equal(t, 1*sec, m.winLen, "the jump between the two windows' resets")
	assert.InDelta(t, 9.5, p.rate, 0.01, "paced at the steady rate")
}

// Resets stated as deltas to the millisecond (OpenAI's) are read at each
// answer's arrival: a delta read 6 ms late puts its reset 6 ms late. A new
// window's first answer, 1 ms late, came 4.5 ms before that reset: read as
// a reset that came before the old one could have passed, GCRA's, the
// sliding counter behind it was paced at 1/s (61% used in the kit).
func TestModelResetReadLateIsNoGCRA(t *testing.T) {
	fine := func(o observation) observation {
		o.coarse, o.delayed = false, false
		return o
	}
	m := testModel()
	m.observe(fine(ans(1, 1, 0, 0.003, 30, 29, 3.003)))
	m.observe(fine(ans(30, 30, 2.9, 2.906, 30, 0, 3.006)))
	m.observe(fine(ans(31, 31, 3.0005, 3.0015, 30, 29, 6.0015)))
	assert.False(t, m.fullAt, "no reset that says when a bucket is full")
	assert.False(t, m.bucket)
}

// A fixed window whose resets are truncated (sethvargo/go-limiter: the
// window ends within the second after its stated reset) is probed at the
// reset's latest end, and one that is shown to round them up at the reset.
func TestModelFixedWindowProbedAtItsLatestEnd(t *testing.T) {
	fixed := func() model {
		m := testModel()
		m.observe(ans(1, 1, 0, 0.001, 30, 29, 3))
		m.observe(ans(29, 30, 2.7, 2.71, 30, 1, 3))
		m.observe(ans(31, 31, 4.2, 4.21, 30, 29, 7)) // full after the reset: a fixed window
		require.Equal(t, kindFixed, m.kind)
		return m
	}
	m := fixed()
	p := m.observe(ans(60, 60, 6.5, 6.51, 30, 0, 7))
	// Its latest end is the sooner of the reset's (8.01 s) and a window's
	// length after its first answer (7.22 s).
	assert.InDelta(t, 7.22*sec, float64(p.capEnd), 1e6,
		"until shown to end by its resets, a spent window holds to its latest end: %v", time.Duration(p.capEnd))

	// Answered from the window that was to end at 7 s by a request sent at
	// 7.2 s: this server truncates. It is never probed at the reset.
	m = fixed()
	m.observe(ans(59, 59, 6.5, 6.51, 30, 1, 7))
	m.observe(ans(60, 60, 7.2, 7.21, 30, 0, 7))
	assert.False(t, m.onTime)
	p = m.observe(ans(61, 61, 8.1, 8.11, 30, 29, 10)) // the next window
	p = m.observe(ans(89, 89, 9.0, 9.01, 30, 0, 10))
	assert.InDelta(t, 11.01*sec, float64(p.capEnd), 1e6, "cap end %v", time.Duration(p.capEnd))

	// Answered from a new window at 6.9 s, before the old one's reset at
	// 7 s: this server rounds its resets up, and a probe may go at them, or
	// at a window's length after the window's first answer if sooner: the
	// reading of 3.14 s, rounded up to 4, is a second long by the jump of
	// 3 s from the last window's reset.
	m = fixed()
	m.observe(ans(59, 59, 6.5, 6.51, 30, 0, 7))
	m.observe(ans(60, 60, 6.85, 6.86, 30, 29, 10))
	assert.True(t, m.onTime)
	assert.Equal(t, 3*sec, m.winLen)
	p = m.observe(ans(89, 89, 9.0, 9.01, 30, 0, 10))
	assert.InDelta(t, 9.87*sec, float64(p.capEnd), 1e6, "cap end %v", time.Duration(p.capEnd))
}

// fastify's fixed window of 5 per 1 s, its resets whole seconds from each
// answer, rounded up ("1" on every answer). Held to the last answer's reset,
// each window was probed most of a window late; a probe answered from a
// full new window a few milliseconds after that reset shows that its
// windows end by their resets, and from then on a spent window ends a
// window after its first answer. A window born short there (a sliding
// window's turn) shows nothing of the kind.
func TestModelOneSecondWindowShownToEndByItsResets(t *testing.T) {
	twoWindows := func(r float64) model {
		m := testModel()
		m.observe(ans(1, 1, 0, 0.01, 5, 4, 0.01+1))
		m.observe(ans(5, 5, 0.43, 0.431, 5, 0, 0.431+1))
		m.observe(ans(6, 6, 2.013, 2.015, 5, 4, 2.015+1)) // a second late: shows nothing
		require.False(t, m.onTime)
		p := m.observe(ans(10, 10, 2.646, 2.648, 5, 0, 2.648+1))
		require.InDelta(t, 3.017*sec, float64(p.capEnd), 2e6, "rounded up: the soonest reset, cap end %v", time.Duration(p.capEnd))
		m.observe(ans(11, 11, 3.649, 3.651, 5, r, 3.651+1)) // probed at the last reset
		return m
	}
	m := twoWindows(4)
	assert.True(t, m.onTime)
	p := m.observe(ans(15, 15, 3.86, 3.862, 5, 0, 3.862+1))
	assert.InDelta(t, 4.653*sec, float64(p.capEnd), 1e6, "cap end %v", time.Duration(p.capEnd))

	m = twoWindows(1)
	assert.False(t, m.onTime, "a window born short after the reset")
}

// TestModelTruncatingServerIsNotShownOnTimeJustAfterAReset: a full new
// window answered a few milliseconds after the old one's whole-second
// reset shows resets that end their windows (rounded up, or exact) only
// where they may be: had they been truncated, the old window ended
// somewhere in the second after it. A server already shown to truncate
// (a request counted after a delay of 0) shows nothing so. (The kit's
// fixed window of 50 per 5 s at a phase of 250 ms, its delays truncated:
// its first window's "0"s, then a full window a burst's latency after
// the last of them, probed at the next window's truncated reset, a second
// early, and refused in 8% of runs.)
func TestModelTruncatingServerIsNotShownOnTimeJustAfterAReset(t *testing.T) {
	for _, truncates := range []bool{false, true} {
		t.Run(fmt.Sprintf("truncates=%v", truncates), func(t *testing.T) {
			m := testModel()
			m.observe(ans(1, 1, 0, 0.01, 5, 4, 0.01+1))
			m.observe(ans(5, 5, 0.43, 0.431, 5, 0, 0.431+1))
			m.truncates = truncates
			m.observe(ans(6, 6, 1.432, 1.434, 5, 4, 1.434+1)) // probed at the reset, a full window
			assert.Equal(t, !truncates, m.onTime)
		})
	}
}

// A window of a second whose whole-second resets read 1 all through it
// (gofiber's cached clock): a causal answer back at the limit 0.1 s after 7
// were left is a new window, for no bucket of 10 a second refills two in
// that time; its end is then a window after its first answer. The same
// rise after the server gave back inside a window is a sliding log's.
func TestModelFullRiseIsANewWindowWhateverTheResets(t *testing.T) {
	spent := func() model {
		m := testModel()
		m.observe(ans(1, 1, 0, 0.001, 10, 9, 1.001))
		m.observe(ans(3, 3, 0.2, 0.201, 10, 7, 1.201))
		return m
	}
	m := spent()
	p := m.observe(ans(4, 4, 0.3, 0.301, 10, 9, 1.301))
	assert.Equal(t, kindFixed, m.kind)
	assert.Equal(t, 1, m.crossings)
	assert.InDelta(t, 1.301*sec, float64(p.capEnd), 2e6, "cap end %v", time.Duration(p.capEnd))

	m = spent()
	p = m.observe(ans(4, 4, 0.5, 0.501, 10, 9, 1.501)) // 0.3 s: a bucket could have
	assert.Equal(t, kindRefill, m.kind)
	assert.Equal(t, 0, m.crossings)
	assert.Greater(t, p.capGrow, 0.0)

	m = spent()
	m.kind, m.refilled = kindRefill, true // shown to give back before
	m.observe(ans(4, 4, 0.3, 0.301, 10, 9, 1.301))
	assert.Equal(t, 0, m.crossings, "a refilling server's rise")
}

// A window's 429 whose Retry-After is its whole-second reset waits for the
// reset's latest end: truncated with the reset, the Retry-After is up to a
// second early (go-limiter sends its truncated reset as both).
func TestModelRetryAfterAtACoarseResetWaitsForItsLatestEnd(t *testing.T) {
	m := testModel()
	m.observe(ans(1, 1, 0, 0.001, 30, 29, 3))
	o := ans(30, 30, 1.5, 1.501, 30, 0, 3)
	o.status, o.q.RetryAfter = http.StatusTooManyRequests, 1499*time.Millisecond
	p := m.observe(o)
	require.True(t, p.holdOn)
	assert.InDelta(t, 4.001*sec, float64(p.hold), 1e6, "hold %v", time.Duration(p.hold))

	// With no reset beside it, a Retry-After is the server's own word.
	m = testModel()
	m.observe(ans(1, 1, 0, 0.001, 30, 29, 0))
	o = ans(30, 30, 1.5, 1.501, 30, 0, 0)
	o.status, o.q.RetryAfter = http.StatusTooManyRequests, 1499*time.Millisecond
	p = m.observe(o)
	assert.InDelta(t, 3*sec, float64(p.hold), 1e6, "hold %v", time.Duration(p.hold))
}

// A fixed window of a second, whose whole-second resets leave no time
// before its earliest end, is spread over half the time to its cap's end,
// at no less than its steady rate: spent at once, it left nothing between
// one client's requests for the others on the quota, whose probes a few
// milliseconds after the turn were refused (four clients on
// express-rate-limit's 10 per 1 s: 10-15 429s in 12 s).
func TestModelBlindFixedWindowIsSpreadNotBurst(t *testing.T) {
	m := testModel()
	stated := func(o observation) observation { o.q.Window = time.Second; return o }
	m.observe(stated(ans(1, 1, 0, 0.001, 10, 9, 1.001)))
	m.observe(stated(ans(10, 10, 0.2, 0.201, 10, 0, 1.201)))
	p := m.observe(stated(ans(11, 11, 1.01, 1.011, 10, 9, 2.011))) // the next window, full
	require.Equal(t, kindFixed, m.kind)
	assert.InDelta(t, 2.012*sec, float64(p.capEnd), 1e6, "cap end %v", time.Duration(p.capEnd))
	assert.InDelta(t, 9/0.5005, p.rate, 0.1, "what is left over half the time to the cap's end")
	assert.Equal(t, smallBurst, p.burst)

	// Little left: the steady rate at least.
	p = m.observe(stated(ans(19, 19, 1.05, 1.051, 10, 1, 2.051)))
	assert.InDelta(t, 0.95*10, p.rate, 1e-9)
}

// Clients started together each take their first answer's Remaining for
// their own: until the answers have shown whether others spend on the
// quota, an unknown server is paced one request at a time, not two (four
// clients on express-rate-limit's 10 per 1 s drew three 429s from the
// first window so, before any had seen the others).
func TestModelBurstOfOneUntilTheShareIsSeen(t *testing.T) {
	m := testModel()
	p := m.observe(ans(1, 1, 0, 0.02, 10, 6, 1.02))
	assert.Equal(t, 1, p.burst)
	p = m.observe(ans(2, 2, 0.021, 0.03, 10, 1, 1.03)) // four more counted: three others'
	assert.True(t, m.shareSeen)
	assert.Less(t, m.share, 0.9)
	assert.Equal(t, smallBurst, p.burst)

	// A lone client's burst is two once its own spending is all there is.
	m = testModel()
	m.observe(ans(1, 1, 0, 0.001, 30, 29, 3))
	p = m.observe(ans(5, 5, 0.2, 0.201, 30, 25, 3))
	assert.Equal(t, 1, p.burst, "four counted: not enough to tell")
	p = m.observe(ans(10, 10, 0.7, 0.701, 30, 20, 3))
	assert.Equal(t, 1.0, m.share)
	assert.Equal(t, smallBurst, p.burst)
}

// A window's 429 holds no later than the window's cap would have: to the
// latest end its answers and its stated length give it, not to the reset
// plus a whole second. Four clients on express-rate-limit's 10 per 1 s: a
// client whose probe came in after the others had spent a window held two
// seconds from each 429 and probed the spent window after the next one
// again: a 429 every 2 s, and nothing served to it.
func TestModelWindowRefusalHoldsToTheWindowsEnd(t *testing.T) {
	m := testModel()
	stated := func(o observation) observation { o.q.Window = time.Second; return o }
	m.observe(stated(ans(1, 1, 0, 0.002, 10, 8, 1.002)))
	p := m.observe(refused(stated(ans(2, 2, 0.32, 0.321, 10, 0, 1.321)), time.Second))
	require.True(t, p.holdOn)
	assert.InDelta(t, 1.003*sec, float64(p.hold), 2e6, "hold %v", time.Duration(p.hold))

	// Nothing shows where the window started: the reset's latest end (a
	// delay of a second is not taken as rounded up where others spent
	// the window: roundedUp).
	m = testModel()
	m.observe(ans(1, 1, 0, 0.002, 10, 8, 1.002))
	p = m.observe(refused(ans(2, 2, 0.32, 0.321, 10, 0, 1.321), time.Second))
	assert.InDelta(t, 2.004*sec, float64(p.hold), 1e6, "hold %v", time.Duration(p.hold))
}

// bareAnswers returns a function that folds into m an answer that states
// no quota, sent at at and answered 1 ms later, numbered in turn.
func bareAnswers(m *model) func(at float64, status int) plan {
	seq := 0.0
	return func(at float64, status int) plan {
		seq++
		o := ans(seq, seq, at, at+0.001, -1, -1, 0)
		o.status = status
		return m.observe(o)
	}
}

// afterBurst returns a model of a server that sends no quota headers and
// served n requests at once at 0 before a 429 at 0.002, with a function that
// feeds it the answer to the next request, sent at at (seconds) and answered
// a millisecond later, and the plan after that 429.
func afterBurst(n int) (m *model, bare func(at float64, status int) plan, cut plan) {
	mod := testModel()
	m = &mod
	bare = bareAnswers(m)
	for range n {
		bare(0, http.StatusOK)
	}
	return m, bare, bare(0.002, http.StatusTooManyRequests)
}

// The first hold of a server that states nothing probes just after each
// length windows are given, from the first request (sent at 0, answered
// 1 ms later, so a probe goes 1% and a latency past each length): a
// window's end is found when it comes, not up to a third of the hold late.
// A burst too small for a window's quota probes at half a second first,
// for a small bucket's refill; a refusal is never probed again within
// minProbeGap; and the longest length is followed by waits twice as long
// as the hold so far, within MaxCooldown.
func TestModelFirstHoldProbesAtWindowLengths(t *testing.T) {
	probe := func(w float64) instant { return secs(w*(1+probeMargin) + 0.001) }
	hold := func(p plan) float64 { return p.hold.sub(0) / sec }
	t.Run("a window's quota", func(t *testing.T) {
		m, bare, p := afterBurst(30)
		require.True(t, p.holdOn)
		assert.Equal(t, probe(1), p.hold, "no half second: a window would refuse it")
		for _, w := range []float64{2, 3, 4, 5, 10, 15, 20, 30, 60, 120, 300} {
			at := p.hold.sub(0) / sec
			p = bare(at, http.StatusTooManyRequests)
			require.Equal(t, probe(w), p.hold, "after the probe at %.3f s", at)
		}
		p = bare(p.hold.sub(0)/sec, http.StatusOK)
		assert.InDelta(t, 30/(300*(1+probeMargin)+0.001), m.rmax, 1e-9, "the burst over the time to the probe served")
	})
	t.Run("a small burst", func(t *testing.T) {
		_, bare, p := afterBurst(5)
		assert.Equal(t, probe(0.5), p.hold, "half a second first")
		p = bare(p.hold.sub(0)/sec, http.StatusTooManyRequests)
		assert.Equal(t, probe(1), p.hold)
	})
	t.Run("a refusal just before a length", func(t *testing.T) {
		_, bare, _ := afterBurst(30)
		p := bare(2.98, http.StatusTooManyRequests)
		assert.Equal(t, secs(2.981).add(minProbeGap), p.hold, "no sooner than minProbeGap")
	})
	t.Run("past the longest", func(t *testing.T) {
		mod := newModel(float64(100*time.Hour), PaceEven, 0)
		bare := bareAnswers(&mod)
		for range 30 {
			bare(0, http.StatusOK)
		}
		p := bare(0.002, http.StatusTooManyRequests)
		for hold(p) < 3600 {
			p = bare(hold(p), http.StatusTooManyRequests)
		}
		at := hold(p)
		p = bare(at, http.StatusTooManyRequests)
		assert.InDelta(t, 3*(at+0.001), hold(p), 1e-6, "twice as long again as the hold so far")
		_, bare2, _ := afterBurst(30)
		p = bare2(1000, http.StatusTooManyRequests)
		assert.Equal(t, secs(1000.001).add(float64(10*time.Minute)), p.hold, "within MaxCooldown")
	})
	// A burst spread over a minute (a client that sends now and then), or
	// a first answer that is a 429 (another spent the window), places no
	// window's start: a backoff.
	for _, tc := range []struct {
		name string
		n    int
	}{{"a sparse burst", 30}, {"a first answer that is a 429", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			mod := testModel()
			m := &mod
			for i := range tc.n {
				m.observe(ans(float64(i+1), float64(i+1), 2*float64(i), 2*float64(i)+0.001, -1, -1, 0))
			}
			at := 2 * float64(tc.n)
			o := ans(float64(tc.n+1), float64(tc.n+1), at, at+0.001, -1, -1, 0)
			o.status = http.StatusTooManyRequests
			p := m.observe(o)
			require.True(t, p.holdOn)
			assert.False(t, m.ladder)
			assert.GreaterOrEqual(t, hold(p)-(at+0.001), 0.75*minBackoff/sec, "a backoff")
			assert.Less(t, hold(p), at+30, "not the next window length from the first request")
			assert.Zero(t, m.cycle)
		})
	}
}

// Answers 110 ms away, one at a time: a fixed window of 30 per 3 s from the
// first request lasts into its second window before it refuses. The first
// hold probes that window's end, not the next length (10 s), which cost
// ulule-bare half its run in half the runs with 100 ms round trips.
func TestModelFirstHoldProbesTheEndOfALaterWindow(t *testing.T) {
	mod := testModel()
	m := &mod
	const rtt = 0.11
	seq := 0.0
	send := func(at float64, status int) plan {
		seq++
		o := ans(seq, seq, at, at+rtt, -1, -1, 0)
		o.status = status
		return m.observe(o)
	}
	at := 0.0
	for ; at < 5.9; at += rtt {
		send(at, http.StatusOK)
	}
	p := send(at, http.StatusTooManyRequests)
	require.True(t, p.holdOn)
	end := 6 * (1 + probeMargin)
	assert.Greater(t, p.hold, secs(end), "after the second window's end")
	assert.Less(t, p.hold, secs(end+3*rtt), "within a gap between sends and a latency of it")
	assert.Equal(t, float64(3*time.Second), m.cycle)

	// A burst, then requests 2.5 s apart: windows of 1 and 2 s may have
	// ended unseen in the gaps, and one of 3 s may have begun with the
	// request at 4.5 s, not at 3 s.
	mod = testModel()
	seq = 0
	for range 20 {
		send(0, http.StatusOK)
	}
	send(2.5, http.StatusOK)
	send(4.5, http.StatusOK)
	p = send(5.9, http.StatusTooManyRequests)
	assert.Equal(t, float64(3*time.Second), m.cycle)
	assert.GreaterOrEqual(t, p.hold, secs(4.5+3), "the end of a window opened at 4.5 s")
}

// A window of 30 per 3 s that states nothing, found by the first hold at
// 3 s, is held to its ends, counted from the request that began each (the
// probe after a hold, or the first sent past the last end), once it served
// its 30: one probe a refusal, not a backoff's three. Refused before it
// served them, or at an end, it is no such window: backoffs again.
func TestModelWindowFoundAtALengthIsHeldToItsEnds(t *testing.T) {
	end := func(start float64) float64 { return start + 3*(1+probeMargin) + 0.001 }
	hold := func(p plan) float64 { return p.hold.sub(0) / sec }
	serve := func(bare func(float64, int) plan, from float64, n int) {
		for i := range n {
			bare(from+0.09*float64(i), http.StatusOK)
		}
	}
	m, bare, p := afterBurst(30)
	for _, w := range []float64{2, 3} {
		p = bare(hold(p), http.StatusTooManyRequests)
		require.InDelta(t, w*(1+probeMargin)+0.001, hold(p), 1e-6)
	}
	start := hold(p) // the probe at 3 s, served: it began a window
	serve(bare, start, 30)
	p = bare(start+2.7, http.StatusTooManyRequests)
	require.True(t, p.holdOn)
	assert.InDelta(t, end(start), hold(p), 1e-6, "to the window's end")

	// The probe there begins the next window; its requests go on past its
	// end, and the first sent past it begins the one after.
	start = hold(p)
	serve(bare, start, 64)
	start += 0.09 * 34 // the first sent past the end
	p = bare(start+2.9, http.StatusTooManyRequests)
	assert.InDelta(t, end(start), hold(p), 1e-6, "to the end of the window the first request past the last end began")

	// Refused at that end: no window of 3 s.
	at := hold(p)
	p = bare(at, http.StatusTooManyRequests)
	assert.Zero(t, m.cycle)
	assert.Less(t, hold(p), end(at)-0.5, "a backoff, not a window's length")

	// Refused before a window's quota was served since the request that
	// began it: a backoff.
	m, bare, p = afterBurst(30)
	p = bare(hold(p), http.StatusTooManyRequests)
	p = bare(hold(p), http.StatusTooManyRequests)
	start = hold(p)
	serve(bare, start, 20)
	at = start + 2
	p = bare(at, http.StatusTooManyRequests)
	assert.Zero(t, m.cycle)
	assert.Less(t, hold(p), end(start)-0.5, "a backoff")
}

// What no window of the length found explains leaves it alone: a length
// MaxCooldown cut short is not taken for the window's (its probe went
// sooner); a refusal answered after a request sent later began the next
// window is the old window's; an answer that states a quota ends the
// guessing.
func TestModelWindowLengthOnlyWhereFound(t *testing.T) {
	hold := func(p plan) float64 { return p.hold.sub(0) / sec }
	t.Run("cut short by MaxCooldown", func(t *testing.T) {
		mod := newModel(float64(4*time.Second), PaceEven, 0)
		m := &mod
		for range 30 {
			m.observe(ans(1, 1, 0, 0.001, -1, -1, 0))
		}
		at, seq := 0.002, 31.0
		for range 6 { // the burst's and 1, 2, 3, 4 and 5 s refused; 10 s is past MaxCooldown
			o := ans(seq, seq, at, at+0.001, -1, -1, 0)
			o.status = http.StatusTooManyRequests
			at, seq = hold(m.observe(o)), seq+1
		}
		assert.InDelta(t, 5*(1+probeMargin)+0.002+4, at, 1e-6, "MaxCooldown, not 10 s")
		require.NotZero(t, m.firstOK)
		m.observe(ans(seq, seq, at, at+0.001, -1, -1, 0))
		assert.Zero(t, m.cycle, "9 s served: no window of 10 s shown")
	})
	t.Run("out of order", func(t *testing.T) {
		m, bare, p := afterBurst(30)
		p = bare(hold(p), http.StatusTooManyRequests)
		p = bare(hold(p), http.StatusTooManyRequests)
		start := hold(p)
		for i := range 35 {
			bare(start+0.09*float64(i), http.StatusOK) // the last sent past the end
		}
		cut := m.rate
		o := ans(100, 100, start+2.99, start+3.2, -1, -1, 0) // sent before, answered after
		o.status = http.StatusTooManyRequests
		p = m.observe(o)
		assert.False(t, p.holdOn, "the old window's refusal")
		assert.Equal(t, cut, m.rate, "no cut")
		assert.Equal(t, 3*float64(time.Second), m.cycle)
	})
	t.Run("a quota stated", func(t *testing.T) {
		m, bare, p := afterBurst(30)
		p = bare(hold(p), http.StatusTooManyRequests)
		p = bare(hold(p), http.StatusTooManyRequests)
		bare(hold(p), http.StatusOK)
		require.NotZero(t, m.cycle)
		m.observe(ans(200, 200, 4, 4.001, 30, 20, 0))
		assert.Zero(t, m.cycle)
		assert.False(t, m.first)
	})
}

// A token bucket that sends no headers (echo's x/time/rate, 10/s, burst
// 20): its free burst is cut, and the 429 that comes soon after (the cut
// left the bucket empty) cuts what was measured since, not back to a slow
// start at a request a second.
func TestModelBare429SoonAfterACutKeepsTheMeasuredRate(t *testing.T) {
	m, bare, p := afterBurst(20)
	require.True(t, m.aimd)
	first := p.rate
	assert.Greater(t, first, 10.0, "what the burst served, over a second")
	// Ten served over the next 0.9 s, at the bucket's refill, then a 429.
	for i := range 10 {
		bare(0.1+0.09*float64(i), http.StatusOK)
	}
	p = bare(0.95, http.StatusTooManyRequests)
	assert.False(t, m.slowStart, "a rate was measured: no slow start")
	assert.InDelta(t, decrease*10/0.94, p.rate, 0.5, "cut from what was served since the last cut")
	// Two more served, then a 429 again: too few to measure, the rate in
	// force is cut.
	bare(1.2, http.StatusOK)
	inForce := bare(1.3, http.StatusOK).rate
	p = bare(1.35, http.StatusTooManyRequests)
	assert.False(t, m.slowStart, "a rate was measured: no slow start")
	assert.InDelta(t, decrease*inForce, p.rate, 1e-6)
}

// A fixed window of 30 per 3 s that sends no headers (ulule/limiter without
// them): its first 30 come at once, and nothing more until the window ends.
// The burst over a second guessed 37.5/s, and the pace after the hold spent
// the next window in under a second and drew a 429 at every window; the
// hold's end shows the rate: at most 30 over the 3.2 s until the server
// served again.
func TestModelFirstBurstIsMeasuredAtItsRecovery(t *testing.T) {
	m, bare, p := afterBurst(30)
	require.True(t, p.holdOn)
	assert.GreaterOrEqual(t, p.hold.sub(secs(0.003)), minBackoff/2, "the first backoff")
	bare(1, http.StatusTooManyRequests)
	bare(3.2, http.StatusOK)
	assert.InDelta(t, 30/3.2, m.rmax, 1e-9, "the burst over the time until the server served again")
	assert.False(t, m.slowStart)
	// The window ended before the server served again: the rate is at
	// least that. The curve starts on its plateau there, not 30% below.
	assert.InDelta(t, 30/3.2, m.rate, 1e-6, "at it, not under it or over it")

	// The next window's end, at 10/s: what is cut is what was served
	// since the recovery, not since the last 429 of the hold (5.9/s, cut
	// to 4.1/s).
	for i := range 30 {
		bare(3.3+0.1*float64(i), http.StatusOK)
	}
	p = bare(6.25, http.StatusTooManyRequests)
	assert.InDelta(t, decrease*31/(6.251-3.2), p.rate, 1e-6, "the 31 served since the recovery (sent at 3.2 s), cut")

	// Answered at the instant it was sent (an in-memory server in a
	// synctest bubble), the recovery is on its plateau all the same.
	m, bare, _ = afterBurst(30)
	bare(1, http.StatusTooManyRequests)
	p = m.observe(ans(100, 100, 3.2, 3.2, -1, -1, 0))
	assert.InDelta(t, 30/3.2, p.rate, 1e-6, "with no latency")
}

// Django REST framework's log, 30 per 3 s, states nothing but a 429's
// Retry-After: the first hold ends when the server said, so the first burst
// over it is the window's quota over its length, the rate itself. The curve
// keeps a safety share under it for measuredRequests; climbing after
// cubicRequests, it drew a 429 (and a second's Retry-After) every 4 s.
func TestModelRateMeasuredOverATimedHoldIsKept(t *testing.T) {
	m := testModel()
	seq := 0.0
	send := func(at float64, status int, retryAfter time.Duration) plan {
		seq++
		o := ans(seq, seq, at, at+0.001, -1, -1, 0)
		o.status, o.q.RetryAfter = status, retryAfter
		return m.observe(o)
	}
	for range 30 {
		send(0, http.StatusOK, 0)
	}
	p := send(0.002, http.StatusTooManyRequests, 3*time.Second)
	assert.Equal(t, 1, p.burst, "the probe at the hold's end, then the pace: nothing saved up over the hold")
	at := p.hold.sub(secs(0)) / sec
	p = send(at, http.StatusOK, 0)
	rate := safety * 30 / at
	assert.InDelta(t, rate, p.rate, 1e-6, "a safety share under the window's quota over its length")
	assert.Positive(t, m.measured)
	for range measuredRequests {
		at += 1 / p.rate
		p = send(at, http.StatusOK, 0)
		require.InDelta(t, rate, p.rate, 1e-6, "kept at %.1f s", at)
	}
	for range 3 * cubicRequests {
		at += 1 / p.rate
		p = send(at, http.StatusOK, 0)
	}
	assert.Greater(t, p.rate, rate, "then probing past it")

	// A 429 there says the measured rate was the server's: back to it,
	// not cut below it (cut, the log drew a 429 every 5 s, each followed
	// by a climb back from 70%), and on it for measuredRequests again.
	at += 0.1
	p = send(at, http.StatusTooManyRequests, time.Second)
	assert.InDelta(t, rate, p.rate, 1e-6, "back to the measured rate")
	assert.Positive(t, m.measured)
	at = p.hold.sub(secs(0)) / sec
	for range measuredRequests {
		p = send(at, http.StatusOK, 0)
		require.InDelta(t, rate, p.rate, 1e-6, "kept at %.1f s", at)
		at += 1 / p.rate
	}

	// A 429 on it, not past it: the server serves less than was measured
	// (others came to share it), and the rate is cut as ever and measured
	// anew.
	p = send(at, http.StatusTooManyRequests, time.Second)
	assert.Less(t, p.rate, rate)
	assert.Zero(t, m.measured)

	// One of four clients on that log, with 7 of the first 30: its part
	// of the window's quota over the window, not a guess to double from.
	m = testModel()
	seq = 0
	for range 7 {
		send(0, http.StatusOK, 0)
	}
	p = send(0.002, http.StatusTooManyRequests, 3*time.Second)
	at = p.hold.sub(secs(0)) / sec
	p = send(at, http.StatusOK, 0)
	assert.False(t, m.slowStart)
	assert.InDelta(t, safety*7/at, p.rate, 1e-6)

	// A first hold that a backoff ended measures only a bound under the
	// rate: the curve climbs past it at once.
	m2, bare, _ := afterBurst(30)
	p = bare(3.2, http.StatusOK)
	assert.Zero(t, m2.measured)
	assert.InDelta(t, 30/3.2, p.rate, 1e-6)
}

// The first hold of a server that sends no headers ends at a window's end
// that nothing told: each backoff is half again the one before, with a
// quarter's jitter, so once three probes were refused each wait is at most
// about the hold before it (1.1×), a third of the whole hold late without
// the jitter. Doubling, with half's jitter, waited up to 3× that and found
// a 3 s window up to 4.5 s late (ulule-bare, counting-bare: 46–114 of 120
// served in 12 s runs; 85–109 now).
func TestModelFirstHoldFindsTheWindowEndSoon(t *testing.T) {
	for seed := range uint64(200) {
		m, bare, _ := afterBurst(30)
		m.jitter = *rand.NewPCG(seed, seed)
		first, arrived := 0.003, 0.003 // the first 429's arrival
		p := bare(0.5, http.StatusTooManyRequests)
		arrived = 0.501
		for probe := 2; probe <= 8; probe++ {
			at := p.hold.sub(secs(0)) / sec
			wait, held := at-arrived, arrived-first
			if probe > 3 {
				require.LessOrEqualf(t, wait, 1.1*held, "seed %d, probe %d: the wait after a hold of %.2f s", seed, probe, held)
			}
			p, arrived = bare(at, http.StatusTooManyRequests), at+0.001
		}
	}
}

// A token bucket that sends no headers serves again within a second of its
// first 429: the guess from its burst was no window's quota, and the rate
// doubles from it until a 429 measures the bucket's refill.
func TestModelQuickRecoveryDoublesFromTheGuess(t *testing.T) {
	m, bare, _ := afterBurst(6)
	guess := m.rmax
	bare(0.3, http.StatusOK)
	require.True(t, m.slowStart)
	var p plan
	for i := range 10 {
		p = bare(0.4+0.1*float64(i), http.StatusOK)
	}
	assert.Greater(t, p.rate, 2*guess, "doubled twice in 1.3 s")
}

// A small window that sends no headers, 5 a minute: a burst of 5, then
// nothing until the minute is over. Too few to measure a rate by, and yet
// under a request a second: the rate is bounded by them, not doubled from
// a request a second, under which slow start does not go.
func TestModelSmallWindowBoundsTheRate(t *testing.T) {
	m, bare, _ := afterBurst(5)
	bare(10, http.StatusTooManyRequests)
	bare(60, http.StatusOK)
	assert.False(t, m.slowStart)
	assert.InDelta(t, 5/60.0, m.rmax, 1e-3)
}

// A first burst too small for a rate (a client's part of a quota that
// others share) bounds the rate only where the probe served went at a
// length windows are given: four clients on a window of 30 per 3 s take
// about 7 each, and each is served again at 3 s; its 7 over 3 s is its
// rate. Served at counterProbe, the server is a sliding counter, whose
// first window's count weighs on past its length: the rate doubles from
// the guess, as after a quick recovery (a bucket served at bucketProbe,
// TestModelQuickRecoveryDoublesFromTheGuess).
func TestModelSmallFirstBurstIsAWindowsQuotaAtALength(t *testing.T) {
	walk := func(bare func(float64, int) plan, p plan, to float64) {
		for at := p.hold.sub(0) / sec; at < to; at = p.hold.sub(0) / sec {
			p = bare(at, http.StatusTooManyRequests)
		}
		bare(p.hold.sub(0)/sec, http.StatusOK)
	}
	m, bare, p := afterBurst(7)
	walk(bare, p, 3)
	assert.False(t, m.slowStart, "a window's part, served again at 3 s")
	assert.InDelta(t, 7/(3*(1+probeMargin)+0.001), m.rmax, 1e-9)
	assert.Equal(t, float64(3*time.Second), m.cycle)

	m, bare, p = afterBurst(7)
	walk(bare, p, 4)
	assert.True(t, m.slowStart, "a sliding counter, served again at 4 s: doubling from the guess")
	assert.InDelta(t, 1.25*7, m.rmax, 1e-9, "the guess, not 7 over 4 s")
	assert.Zero(t, m.cycle, "no window of 4 s")
}

// After a hold, one request goes alone. A 429 right after it answered says
// that the server had room for just that one (a bucket that gave back one
// token, a sliding counter's old count that fell by one), not that the rate
// is too high: it backs off again but does not cut. Cutting there, from a
// second of hold with one served, took counting-bare to 1.25/s, and echo's
// bucket back to a slow start at 1/s.
func TestModelProbeAloneDoesNotEndTheEpisode(t *testing.T) {
	m, bare, _ := afterBurst(20)
	bare(1.5, http.StatusOK) // the probe
	before := m.rate
	p := bare(1.51, http.StatusTooManyRequests)
	require.True(t, p.holdOn, "it backs off")
	assert.Equal(t, before, m.rate, "uncut")
	assert.False(t, m.slowStart)
	// Two served since the cut: the episode is over, and a 429 cuts.
	bare(2, http.StatusOK)
	bare(2.1, http.StatusOK)
	cut := bare(2.2, http.StatusTooManyRequests).rate
	assert.Less(t, cut, before)
}

// With no 429, the curve does not stay under a rate measured low: a k at
// its top (a tenth over the rate that drew the last 429) makes that top the
// new plateau, and it climbs on, if the client sends at half that rate or
// more. Capped at a quarter over it, a rate of 5/s measured on a server of
// 10/s stayed at 6.25/s for good (nginx's limit_req, 10 r/s, served 86–88
// of 125 in 12 s).
func TestModelClimbIsNotStuckBelowTheServersRate(t *testing.T) {
	m, bare, _ := afterBurst(5)
	bare(1.5, http.StatusOK)
	bare(1.6, http.StatusOK)
	m.slowStart, m.rmax = false, 5 // as if measured
	var p plan
	for at := 1.7; at < 21.7; at += 0.1 {
		p = bare(at, http.StatusOK)
	}
	assert.Greater(t, p.rate, 10.0, "20 s later, past the server's rate")

	// A client that sends a request a second learns nothing of a limit of
	// 5/s: it does not climb.
	m, bare, _ = afterBurst(5)
	bare(1.5, http.StatusOK)
	bare(1.6, http.StatusOK)
	m.slowStart, m.rmax = false, 5
	for at := 2.0; at < 62; at++ {
		p = bare(at, http.StatusOK)
	}
	assert.LessOrEqual(t, p.rate, maxClimb*5)
}

// throttled's GCRA told its 10/s: near full, its "seconds until full" reset
// is 1, so the window inferred from it is a second and its refill would be
// 30/s. A single client at 10/s then looked like a third of the spending
// (the refill is counted as spent) and kept to a third of the bucket's idle
// tokens, 1 run in 3. The told rate bounds the refill.
func TestModelToldRateBoundsAnInferredRefill(t *testing.T) {
	m := newModel(float64(10*time.Minute), PaceEven, 10)
	for i := range 30 {
		at := 0.1 * float64(i)
		r := 28.0 // the refill gives back what this client takes
		if i == 5 {
			r = 29 // a rise inside the "window": a refilling server
		}
		m.observe(ans(float64(i+1), float64(i+1), at, at+0.001, 30, r, at+1))
	}
	require.Equal(t, kindRefill, m.kind)
	assert.InDelta(t, 1.0, m.share, 1e-9, "this client is all of the spending")
}

// A window inferred from whole-second Unix resets reads a second long when
// the server rounds them up: 30 per 3 s paced as 30 per 4 s. A rate told
// within that second is the server's steady rate, and its window the
// server's; one beyond it is not.
func TestModelToldRateWithinAnInferredWindowsSecond(t *testing.T) {
	for _, tt := range []struct{ told, want, win float64 }{{10, 10, 3}, {9, 9, 30.0 / 9}, {50, 7.5, 4}, {0, 7.5, 4}} {
		m := newModel(float64(10*time.Minute), PaceEven, tt.told)
		m.observe(ans(1, 1, 0.5, 0.501, 30, 29, 4)) // a reset of 3.499 s reads as 4
		assert.InDelta(t, tt.win*sec, m.winLen, 1, "told %v", tt.told)
		assert.InDelta(t, tt.want, m.steady(), 1e-9, "told %v", tt.told)
	}
}

// httprate's Retry-After is the whole window, whenever it refuses: at a
// turn, its reset. A sliding window gives its quota back from the refusal
// on, as the old window's count weighs less: a lone client's first refusal
// is retried once two requests' worth has come back (one for the refusal,
// which some servers count), and so is one of a request sent before it
// came, but a second in a row is held to the end it was given. Its resets
// are whole seconds: it may give back only as its clock's second ticks
// (fiber's does), at the window's end less whole seconds, so the two come
// back from the next tick on.
func TestModelSlidingWindowRefusalIsRetriedSoon(t *testing.T) {
	m := testModel()
	// The last window counted 30 (none left at this one's start): 10/s
	// comes back. Requests 3 and 4 went before 2's answer came.
	m.observe(ans(1, 1, 0, 0.01, 30, 0, 3))
	m.observe(ans(2, 4, 0.2, 0.21, 30, 1, 3)) // more left for a later request
	require.Equal(t, kindRefill, m.kind)
	o := ans(4, 4, 0.2, 0.212, 30, 0, 3)
	o.status, o.q.RetryAfter = http.StatusTooManyRequests, 3*time.Second // the whole window
	p := m.observe(o)
	require.True(t, p.holdOn)
	assert.InDelta(t, 1.01+2/9.5, float64(p.hold)/sec, 0.001, "retried after two requests' worth at 95%% of 10/s from the tick at 1.01")

	o = ans(3, 4, 0.2, 0.213, 30, 0, 3) // sent before the refusal came: the same episode
	o.status, o.q.RetryAfter = http.StatusTooManyRequests, 3*time.Second
	p = m.observe(o)
	assert.InDelta(t, 1.01+2/9.5, float64(p.hold)/sec, 0.001, "a refusal of a request sent before the first came is no retry's")

	o = ans(5, 5, 0.43, 0.431, 30, 0, 3)
	o.status, o.q.RetryAfter = http.StatusTooManyRequests, 3*time.Second
	p = m.observe(o)
	assert.InDelta(t, 4.001, float64(p.hold)/sec, 0.001, "a second refusal in a row waits for the reset's latest end")

	// A success clears it: the next episode's first refusal, with no
	// Retry-After, is retried soon again.
	m.observe(ans(6, 6, 4.2, 4.201, 30, 0, 6))
	o = ans(7, 7, 4.3, 4.301, 30, 0, 6)
	o.status = http.StatusTooManyRequests
	p = m.observe(o)
	assert.InDelta(t, 5.001+2/9.5, float64(p.hold)/sec, 0.001)
}

// A 3 s sliding window whose windows end late in a second (2.9 s, 5.9 s),
// its resets truncated: reset − arrival is never more than 2 s, and the pace
// ran at 15/s against the server's 10/s. The jump between two windows'
// resets is the length.
func TestModelSlidingWindowLengthFromItsCadence(t *testing.T) {
	m := testModel()
	m.observe(ans(1, 1, 0, 0.01, 30, 2, 2))
	m.observe(ans(2, 2, 0.5, 0.51, 30, 5, 2)) // more left for a later request
	require.Equal(t, kindRefill, m.kind)
	require.Equal(t, float64(2*time.Second), m.winLen)
	m.observe(ans(3, 3, 3.0, 3.01, 30, 3, 5))
	assert.Equal(t, float64(3*time.Second), m.winLen)
	assert.InDelta(t, 10.0, m.steady(), 1e-9)

	// A jump across two windows (an idle one between) is no length.
	m.observe(ans(4, 4, 9.0, 9.01, 30, 28, 11))
	assert.Equal(t, float64(3*time.Second), m.winLen)
}

// nest's sliding log states its resets as whole seconds from now, each a
// record's, counted from the request that opened it. The jump from the old
// window's reset to the next one's holds the idle time before the probe
// that opened it: no cadence (the 3 s log read as 3.16 s, paced at 9.0/s).
func TestModelDelayedResetsTellNoCadence(t *testing.T) {
	m := testModel()
	m.observe(ans(1, 1, 0, 0.01, 30, 20, 0.01+3))
	m.observe(ans(2, 2, 0.5, 0.51, 30, 25, 0.51+3)) // more left for a later request
	require.Equal(t, kindRefill, m.kind)
	require.Equal(t, float64(3*time.Second), m.winLen)
	m.observe(ans(3, 3, 3.67, 3.68, 30, 20, 3.68+3)) // the next window, its reset 3.17 s on
	assert.Equal(t, float64(3*time.Second), m.winLen)
}

// A burst released at once after a window's probe, counted by the server
// in another order than its answers are read: the first answer read was
// counted last (told 0 left, one request after the probe's), the others
// before it. Once nothing is in flight they were this client's, not the
// others' spending (ulule, 10 per 1 s: a share of 0.44 in 6 s, and half of
// each window unspent). The same burst with others' spending in it still
// shows them.
func TestModelOwnBurstCountedOutOfOrderIsNoOthersSpending(t *testing.T) {
	burst := func(others float64) model {
		m := testModel()
		m.observe(ans(1, 1, 0, 0.001, 20, 19, 1))
		// Requests 2-10 go at once after the probe's answer, after the
		// others spent theirs; the server counts 3-10 first, then 2.
		for seq := 2.0; seq <= 10; seq++ {
			r := 21 - seq - others // 3 told 18 left ... 10 told 11
			if seq == 2 {
				r = 10 - others
			}
			o := ans(seq, 10, 0.002, 0.004, 20, r, 1)
			o.inflight = 10 - seq
			m.observe(o)
		}
		return m
	}
	m := burst(0)
	assert.Equal(t, 1.0, m.share, "alone: own %v, spent %v", m.ownAcc, m.spentAcc)
	m = burst(5)
	assert.InDelta(t, 10.0/15, m.share, 1e-9, "9 own of 14 spent: own %v, spent %v", m.ownAcc, m.spentAcc)

	// A request credited to a pair is in the next pair's own too, when
	// the chain goes on from the pair's later answer: counted once.
	m = testModel()
	m.observe(ans(1, 1, 0, 0.001, 10, 9, 1))
	o := ans(2, 3, 0.002, 0.004, 10, 7, 1) // 2 and 3 went together; 3 was counted first
	o.inflight = 1
	m.observe(o)
	o = ans(3, 4, 0.002, 0.006, 10, 8, 1) // 4 went after 2's answer
	o.inflight = 1
	m.observe(o)
	m.observe(ans(4, 4, 0.005, 0.007, 10, 6, 1))
	assert.Equal(t, [2]float64{3, 3}, [2]float64{m.ownAcc, m.spentAcc}, "own and spent")
}

// Four clients on a quota of 10 per 2 s: each has 2.5 of a window, and 8
// counted (the evidence a large quota needs) is most of a window: the four
// had spent it by then (ulule, 10 per 2 s: 9 of 69 answers 429). A quarter
// of the limit, at least 3, is enough for a small one.
func TestModelSmallQuotaTellsTheShareSoon(t *testing.T) {
	m := testModel()
	m.observe(ans(1, 1, 0, 0.001, 10, 9, 2))
	m.observe(ans(2, 2, 0.01, 0.011, 10, 5, 2)) // 4 counted, 1 of them this client's
	assert.Less(t, m.share, 0.5)

	m = testModel()
	m.observe(ans(1, 1, 0, 0.001, 100, 99, 10))
	m.observe(ans(2, 2, 0.01, 0.011, 100, 95, 10))
	assert.Equal(t, 1.0, m.share, "4 counted of a limit of 100 tells nothing yet")
}

// A bucket whose reset moves on with the clock, measured to refill at
// 10/s, with 4 left: a lone client spends all but one over a second (a
// sliding log loses what is kept back), where clients that share it keep
// back the reserve of a tenth of the limit.
func TestModelMovingResetBucketKeepsOneBackAlone(t *testing.T) {
	rate := func(share float64) float64 {
		m := testModel()
		m.kind, m.bucket, m.refilled = kindRefill, true, true
		m.srvLimit, m.winLen, m.avail, m.share = 30, 3*sec, 10, share
		m.plan = plan{capOn: true, capBase: 14, capEnd: never}
		o := ans(10, 10, 1, 1.01, 30, 4, 4)
		m.spread(o, o.reset, slack(o))
		return m.plan.rate
	}
	assert.InDelta(t, safety*10+3, rate(1), 1e-9, "all but one of the 4 left")
	assert.InDelta(t, safety*10+1, rate(0.4), 1e-9, "shared: 3 kept back, the rest spent at its part")
}

// Processes that share one bucket through a Store: the store counts what
// all of them admit, so the others' spending takes no share off this one
// (a share scaled the store's rate and tokens down for all four processes
// at once: 87–92% of the quota used in TestSharedAcrossProcesses).
func TestModelPooledTakesNoShare(t *testing.T) {
	for _, pooled := range []bool{false, true} {
		m := testModel()
		m.pooled = pooled
		m.observe(ans(1, 1, 0, 0.01, 100, 99, 10))
		// Each step this client sends 1 while the server counts 4.
		for i := 1.0; i <= 20; i++ {
			m.observe(ans(1+i, 1+i, 0.1*i, 0.1*i+0.01, 100, 99-4*i, 10))
		}
		if pooled {
			assert.Equal(t, 1.0, m.share, "pooled")
		} else {
			assert.InDelta(t, 0.25, m.share, 0.05, "alone")
		}
	}
}

// A pooled process, one of four on a fixed window of 50 per 5 s, whose
// share stays 1: the others spend too, and a new window found short by
// what they spent since its turn is no sliding window's old count. Read as
// one, its Remaining 0 capped nothing until the reset: no hold went to the
// store, and another process's next request was refused (redisstore's
// TestSharedAcrossProcesses, one run in three).
func TestModelPooledWindowBornShortIsNoSlidingCount(t *testing.T) {
	m := testModel()
	m.pooled = true
	// Resets every 5 s; this process sends one request in three or four
	// the server counts.
	left := []float64{46, 37, 36, 31, 26, 24, 18, 11, 10, 9, 3}
	for i, r := range left {
		at := 0.4 * float64(i)
		m.observe(ans(float64(i+1), float64(i+1), at, at+0.02, 50, r, 5))
	}
	require.Equal(t, 1.0, m.share)
	// 0.14 s into the next window, 18 already counted: the others'.
	m.observe(ans(12, 12, 5.14, 5.16, 50, 32, 10))
	assert.NotEqual(t, kindRefill, m.kind)
	p := m.observe(ans(13, 13, 9.44, 9.46, 50, 0, 10))
	assert.True(t, p.capOn)
	assert.Equal(t, 0.0, p.capGrow, "a fixed window's count gives nothing back")
	assert.LessOrEqual(t, p.capEnd, secs(11), "and holds until about its reset")
}

// A token bucket whose reset moves on with the clock (tollbooth's "1"),
// drained by a burst: at nothing left, a sliding log would give nothing back
// until a window after the burst, but this bucket gave back more than that
// over a second, so its cap grows from the answer.
func TestModelTokenBucketIsNoLog(t *testing.T) {
	m := testModel()
	at := 0.0
	obs := func(seq, r float64) plan {
		o := ans(seq, seq, at, at+0.001, 30, r, 0)
		o.reset, o.resetOK, o.coarse, o.delayed = o.arrived.add(sec), true, true, true
		return m.observe(o)
	}
	for k := 1.0; k <= 30; k++ { // 30 at once
		obs(k, 30-k)
		at += 0.01
	}
	m.winLen = 10 * sec           // read as 10 s: a log would hold the burst for 9
	for k := 31.0; k <= 45; k++ { // 10/s come back while it is paced at 10/s
		at += 0.1
		p := obs(k, 0)
		if m.refills() {
			// Until then, it may be a log: one goes when it gives back
			// the oldest of the 30 newest it holds, of the burst yet.
			back := 9.001 + 0.01*(k-30)
			assert.InDelta(t, back*sec, float64(p.capAt.add(1/p.capGrow)), 1e3, "request %v", k)
		}
	}
	at += 1.1
	obs(46, 10) // 13 back since the first answer at 0 left, 1.3 s before
	require.True(t, m.bucket && m.refilled)
	assert.True(t, m.tokens, "more back than a log of this client's requests would give")
	at += 0.01
	p := obs(47, 0)
	assert.Equal(t, secs(at+0.001), p.capAt, "the cap grows from the answer")
}

// A sliding log gives each request back a window after it was counted, by
// its answer at the latest: not by the send and another request's latency,
// which a slower trip outlasts (the kit's log of 10 per 1 s, answers 1–3 ms
// late, told 10/s: 19 429s in 30 s so). A client alone, told r left, has
// the log hold its Limit − r newest requests, and the oldest of those is the
// next back, whatever a window read a little long says of an older one
// (the kit's log of 5 per 1 s, read as 1.015 s: the request sent at 9.023 s,
// given back at 10.023 s, was taken for held at 10.036 s, and the next
// request went at its return, refused).
func TestModelSlidingLogGivesBackByTheAnswer(t *testing.T) {
	m := testModel()
	m.srvLimit, m.winLen, m.shareSeen = 5, 1.015*sec, true
	for _, at := range []float64{9.023, 9.274, 9.526, 9.778, 10.030} {
		m.sends.add(secs(at), secs(at+0.003))
	}
	m.sends.add(secs(10.033), secs(10.036))
	o := ans(6, 6, 10.033, 10.036, -1, 0, 0)
	assert.Equal(t, secs(9.277).add(1.015*sec), m.sureReturn(o, 0), "the fifth newest, answered at 9.277 s")
	assert.Equal(t, secs(9.529).add(1.015*sec), m.sureReturn(o, 1), "told one left, it holds the four newest")
	m.share = 0.5
	assert.Equal(t, secs(9.026).add(1.015*sec), m.sureReturn(o, 0), "others' in the log: by the window")

	// A trip slower than the answer's: back by its own answer.
	m = testModel()
	m.srvLimit, m.winLen = 5, sec
	m.sends.add(secs(1), secs(1.004)) // 4 ms on its way
	o = ans(2, 2, 1.5, 1.501, -1, 0, 0)
	assert.Equal(t, secs(2.004), m.sureReturn(o, 0))
	assert.Equal(t, secs(2.001), m.logReturn(o), "by the send and this answer's latency")
}

// Flask-Limiter's moving window, a sliding log of 30 per 3 s, reads 3 s as
// 4 from its resets (its Unix second plus one). What it gives back of this
// client's requests places the window: told nothing left at 3.006 s, the
// log held 30, so the 30 newest of this client's requests may still be in
// it and the one before them, sent at 0 s, had been given back. The window
// is at most 3.006 s (a later answer that places it less closely leaves
// it), and the log is paced at its steady rate from there, not at the rate
// its give-back echoes: that echoes this client's own pace of a window
// before, which was 7.1/s while the window read 4 s.
func TestModelSlidingLogWindowFromWhatItGaveBack(t *testing.T) {
	m := testModel()
	for k := 1; k <= 20; k++ { // 10/s for 2 s
		at := 0.1 * float64(k-1)
		m.observe(ans(float64(k), float64(k), at, at+0.002, 30, float64(30-k), math.Floor(at)+4))
	}
	for k := 21; k <= 30; k++ { // the rest at once
		m.observe(ans(float64(k), 30, 2, 2.002+0.001*float64(k-20), 30, float64(30-k), 6))
	}
	require.Equal(t, 4*sec, m.winLen, "read from the resets")
	m.observe(ans(31, 31, 3.004, 3.006, 30, 0, 7)) // admitted after nothing was left: given back
	require.True(t, m.mayBeLog())
	assert.InDelta(t, 3.006*sec, m.winLen, 1e3, "the request sent at 0 s was given back by 3.006 s")
	p := m.observe(ans(32, 32, 3.194, 3.196, 30, 0, 7))
	assert.InDelta(t, 3.006*sec, m.winLen, 1e3, "the request sent at 0.1 s was given back by 3.196 s: no closer")
	assert.GreaterOrEqual(t, p.rate, safety*30/3.006, "paced at the log's steady rate")

	// After a pause, the reset has moved on by two seconds while the old
	// one, its second plus one, is still ahead: the log's, not a GCRA's.
	m.observe(ans(33, 33, 5.5, 5.502, 30, 20, 9))
	assert.False(t, m.fullAt, "not when the bucket is full again")
	assert.True(t, m.mayBeLog())

	// More than a second under what the resets read: no log as read.
	m = testModel()
	m.winLen, m.winRead, m.srvLimit, m.logWin = 4*sec, 4*sec, 30, 2.5*sec
	m.fitRead()
	assert.Equal(t, 4*sec, m.winLen)
}

// A sliding log gives back what it counted a window before: a lone client
// that sent 5/s then and sends 10/s now sees 5/s come back, and what it is
// told left falls by the difference. That is its own spending: counted as
// refilled at the log's steady rate, the other 5/s read as others'
// spending and its share fell to two thirds.
func TestModelLogRefillIsWhatItCounted(t *testing.T) {
	m := testModel()
	m.kind, m.bucket, m.refilled = kindRefill, true, true
	m.srvLimit, m.winLen, m.winRead, m.logWin, m.avail = 30, 3*sec, 3*sec, 3*sec, 5
	var sent []float64
	for at := 0.0; at < 2.9; at += 0.2 {
		sent = append(sent, at)
		m.sends.add(secs(at), secs(at+0.002))
	}
	seq := float64(len(sent))
	for at := 3.0; at < 5; at += 0.1 {
		seq++
		sent = append(sent, at)
		held := 0.0
		for _, s := range sent {
			if s > at-3 {
				held++
			}
		}
		m.observe(ans(seq, seq, at, at+0.002, 30, 30-held, math.Floor(at)+4))
	}
	require.True(t, m.mayBeLog())
	assert.Equal(t, 1.0, m.share)
}

// A 2xx that states its reset in whole seconds and, beside it, a
// Retry-After to the millisecond within that second's slack is placed by
// the Retry-After (rate-limiter-flexible's documented headers); a 429's
// Retry-After, a whole-second one, or one that the reset contradicts
// leaves the reset as it is.
func TestFinerResetFromARetryAfterOnA2xx(t *testing.T) {
	read := secs(0.5)
	cases := []struct {
		name   string
		status int
		reset  float64 // seconds; coarse
		retry  time.Duration
		want   float64 // the reset taken, seconds; 0: none
	}{
		{"rounded up", 200, 4, 2873 * time.Millisecond, 3.373},
		{"truncated", 200, 3, 2873 * time.Millisecond, 3.373},
		{"a whole second", 200, 4, 3 * time.Second, 0},
		{"a date's, from the arrival to the nanosecond", 200, 4, 2873123456, 0},
		{"a refusal", 429, 4, 2873 * time.Millisecond, 0},
		{"a 202", 202, 4, 2873 * time.Millisecond, 0},
		{"beyond the reset's slack", 200, 5, 2873 * time.Millisecond, 0},
		{"none", 200, 4, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := observation{arrived: read, status: tc.status, q: Quota{Limit: 30, Remaining: 5, RetryAfter: tc.retry},
				reset: secs(tc.reset), resetOK: true, coarse: true}
			end, ok := finerReset(o, read)
			if tc.want == 0 {
				assert.False(t, ok, "refined to %v", time.Duration(end))
				return
			}
			require.True(t, ok)
			assert.InDelta(t, tc.want*sec, float64(end), 1e3)
		})
	}
	o := observation{arrived: read, status: 200, q: Quota{RetryAfter: time.Second / 3}, reset: secs(0.8), resetOK: true}
	_, ok := finerReset(o, read)
	assert.False(t, ok, "a reset already finer than a second")
}

// A window whose first answer read its reset in whole seconds and the rest
// to the millisecond (a Retry-After on each 2xx, a whole second on the
// first): the finer readings are weighed against it with its slack, and
// give its length and place its end. Weighed as exact, they were a reset that came closer
// (GCRA's, held 8 s) or moved on with the clock (a bucket's); truncated,
// the window's end stayed its whole second, 0.16 s early, and was probed
// into a 429 at every window; and rounded up, the first window was read as
// 4 s and paced at 7/s. A whole-second reading among the finer ones (a
// Retry-After that fell on a whole second) moves the end no sooner.
func TestModelFinerResetsAfterAWholeSecondOne(t *testing.T) {
	fine := func(o observation, reset float64) observation {
		o.reset, o.coarse, o.delayed = secs(reset), false, false
		return o
	}
	for _, first := range []struct {
		name  string
		reset float64
	}{{"rounded up", 4}, {"truncated", 3}} {
		t.Run(first.name, func(t *testing.T) {
			m := testModel()
			m.observe(ans(1, 1, 0.156, 0.157, 30, 29, first.reset))    // Unix second; Retry-After "3"
			m.observe(fine(ans(2, 2, 0.158, 0.159, 30, 28, 4), 3.157)) // 2.998
			m.observe(fine(ans(3, 3, 0.3, 0.301, 30, 27, 4), 3.159))   // 2 ms on
			assert.Equal(t, kindUnknown, m.kind, "no reset that came closer or moved on")
			assert.False(t, m.bucket)
			assert.InDelta(t, 3*sec, m.winLen, 0.01*sec, "the window: the finer readings' length, not the whole second's")
			var p plan
			for i := 4.0; i <= 30; i++ {
				o := fine(ans(i, i, 0.1*i, 0.1*i+0.001, 30, 30-i, 4), 3.157)
				if i == 15 {
					o = ans(i, i, 1.5, 1.501, 30, 15, first.reset) // a Retry-After of whole seconds, by chance
				}
				p = m.observe(o)
			}
			assert.GreaterOrEqual(t, float64(p.capEnd), 3.157*sec, "the spent window's end: the finer readings', not the whole second")
			assert.Less(t, float64(p.capEnd), 3.2*sec)
		})
	}
}

func TestModelSlidingWindowRefusingItsPaceKeepsOneBack(t *testing.T) {
	// A lone client on a sliding window of 10 per 1 s, paced at 95% of its
	// steady rate, is refused more than a window after any hold: the
	// server counts more than a window's requests (httprate rounds its
	// count and refuses at half a request under its limit), and the pace
	// keeps one request of each window back, 90% of it. The dynamics on
	// the kit's rounding counter: TestScenarioRoundingCounterRefusingItsPace.
	paced := func(t *testing.T, pooled bool) (model, float64) {
		m := slidingWindowOfASecond(t)
		m.pooled = pooled
		at, seq := 2.1, 12.0
		for ; at < 3.2; at += 0.105 {
			m.observe(ans(seq, seq, at, at+0.001, 10, 2, at+1.001))
			seq++
		}
		require.InDelta(t, safety*10, m.plan.rate, 1e-9, "paced at its steady rate")
		m.observe(refused(ans(seq, seq, at, at+0.001, 10, 0, at+1.001), time.Second))
		return m, m.observe(ans(seq+1, seq+1, at+1.01, at+1.011, 10, 3, at+2.011)).rate
	}
	m, r := paced(t, false)
	assert.True(t, m.overPace)
	assert.InDelta(t, 9.0, r, 1e-9, "one request of each window kept back")

	// Not where other processes share the quota through a Store: their
	// spending explains it.
	m, r = paced(t, true)
	assert.False(t, m.overPace)
	assert.InDelta(t, safety*10, r, 1e-9)
}

// A probe refused where others share the quota, on a whole-second reset,
// comes back at a point drawn over half the reset's slack after its latest
// end, not at that end each time: held to it, one of four clients on
// fastify's 5 per 1 s came back at the same phase of each window, just
// before the others spent it at its turn, and was refused every second. A
// lone client's probe is held to the latest end.
func TestModelRefusedProbeOnASharedQuotaIsSpread(t *testing.T) {
	holdAfter := func(seed uint64, shared bool) float64 {
		m := testModel()
		m.jitter = *rand.NewPCG(seed, seed)
		// express-rate-limit's 5 per 1 s (a stated window of 1 s, the
		// reset a delay of "1"): the others spend each window at its
		// turn, so this client's probe is told 1 left and its next
		// request is refused (shared), or nobody does.
		var p plan
		for k := 0.0; k < 8; k++ {
			at := k + 0.024 + 0.003*k
			probe := ans(2*k+1, 2*k+1, at, at+0.001, 5, 4, at+1.001)
			next := ans(2*k+2, 2*k+2, at+0.211, at+0.212, 5, 3, at+1.212)
			if shared {
				probe.q.Remaining, next = 1, refused(ans(2*k+2, 2*k+2, at+0.211, at+0.212, 5, 0, at+1.212), time.Second)
			}
			probe.q.Window, next.q.Window = time.Second, time.Second
			m.observe(probe)
			p = m.observe(next)
		}
		require.Equal(t, shared, m.ownShare() < 1, "share %.2f", m.ownShare())
		require.True(t, p.capOn)
		at := float64(p.capEnd) / sec // the probe, at the cap's end
		o := refused(ans(17, 17, at, at+0.001, 5, 0, at+1.001), 0)
		o.q.Window = time.Second
		p = m.observe(o)
		require.True(t, p.holdOn)
		return float64(p.hold)/sec - at
	}
	lone := holdAfter(1, false)
	var seen []float64
	for seed := range uint64(8) {
		h := holdAfter(seed, true)
		assert.GreaterOrEqual(t, h, lone-1e-9, "no sooner than the latest end")
		assert.LessOrEqual(t, h, lone+0.5+1e-9, "within half a second of it")
		seen = append(seen, h)
	}
	assert.Greater(t, slices.Max(seen)-slices.Min(seen), 0.1, "spread: %v", seen)
	assert.Equal(t, lone, holdAfter(2, false), "a lone client's is the latest end")
}

func TestModelRefusalAfterRoomLeftIsTheOthersSpending(t *testing.T) {
	// One of four clients on a fixed window of 5 per 1 s: the others
	// spend the window at its turn, this client's probe is told 1 left,
	// and its next request, on that one, is refused. A refused request
	// took nothing of the 1: the others did. Counted as its own, the pairs
	// showed no one else, and the client sent into a spent window every
	// second with its share at 1.
	m := testModel()
	for k := 0.0; k < 8; k++ {
		// express-rate-limit's IETF fields: a stated window of 1 s, the
		// reset a delay of "1".
		at := k + 0.024 + 0.003*k // its cap's end: a second after the last window's first answer
		probe := ans(2*k+1, 2*k+1, at, at+0.001, 5, 1, at+1.001)
		next := refused(ans(2*k+2, 2*k+2, at+0.211, at+0.212, 5, 0, at+1.212), time.Second)
		probe.q.Window, next.q.Window = time.Second, time.Second
		m.observe(probe)
		m.observe(next)
	}
	assert.True(t, m.shareSeen, "the others' spending seen")
	assert.Less(t, m.share, 0.9, "this client's share")

	// A request of 3 tokens (a token quota) told 7 left, and the next
	// refused: the others took the 7, none of them this client's, whose
	// refused request took nothing. Counted as one token, its other two
	// were this client's spending: a share of 3/8.
	m = testModel()
	probe := ans(3, 3, 0.030, 0.031, 10, 7, 1.031)
	next := refused(ans(6, 6, 0.240, 0.241, 10, 0, 1.241), time.Second)
	probe.cost, next.cost = 3, 3
	m.observe(probe)
	m.observe(next)
	assert.InDelta(t, 1.0/8, m.share, 1e-9, "this client's share")

	// A lone client whose requests cost 3 tokens, told 2 left and refused
	// the next: no room for it, and no one else.
	m = testModel()
	for k := 0.0; k < 8; k++ {
		probe := ans(4*k+3, 4*k+3, k+0.030, k+0.031, 8, 2, k+1.031)
		next := refused(ans(4*k+6, 4*k+6, k+0.240, k+0.241, 8, 2, k+1.241), time.Second)
		probe.cost, next.cost = 3, 3
		m.observe(probe)
		m.observe(next)
	}
	assert.Equal(t, 1.0, m.share, "a request that cost more than was left")
}

// A sliding window nearly spent, past its second turn, grows its cap only
// once this client's oldest request it holds comes back, as a sliding
// log's would (growsAtReturns): what a log gives back at a turn is what it
// counted a window before, when it counted it, not the window's count
// spread evenly.
func TestModelNearlySpentSlidingCapGrowsAtReturns(t *testing.T) {
	fine := func(o observation) observation { o.coarse, o.delayed = false, false; return o }
	m := testModel()
	m.observe(fine(ans(1, 1, 0, 0.001, 30, 29, 3.001)))
	m.observe(fine(ans(30, 30, 2.9, 2.901, 30, 0, 3.001)))
	m.observe(fine(ans(31, 31, 3.05, 3.051, 30, 0, 6.051)))
	m.observe(fine(ans(32, 32, 4.1, 4.101, 30, 9, 6.051))) // a third of the old 30 back
	for seq := 33.0; seq <= 40; seq++ {                    // then spent in a bunch at 4.5 s
		at := 4.5 + (seq-33)*0.001
		m.observe(fine(ans(seq, seq, at, at+0.001, 30, 41-seq, 6.051)))
	}
	p := m.observe(fine(ans(41, 41, 6.1, 6.101, 30, 3, 9.101))) // the second turn, 3 left
	require.Equal(t, 2, m.crossings)
	require.True(t, m.sliding())
	back := 4.1 + 3 + 0.001 // 4.1's request, a window and a latency on
	assert.Less(t, p.capSeq(secs(back-0.001)), p.capBase+1, "nothing more before 4.1's request is back")
	assert.InDelta(t, p.capBase+1, p.capSeq(secs(back)), 1e-6, "one more when it is")

	// With a third of the limit or more left, the cap grows from the
	// answer, as a sliding counter gives back.
	p = m.observe(fine(ans(42, 42, 6.2, 6.201, 30, 10, 9.101)))
	assert.Equal(t, secs(6.201), p.capAt)
}
