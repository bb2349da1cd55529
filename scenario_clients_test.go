package throttle

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-throttle/throttle/throttletest"
)

// TestScenarioFourClientSweep: four buckets with no store between them on
// windows of a second, each kind of server the kit has at 5 and 10 per 1 s,
// eight schedules each (the kit's Jitter drawn from eight seeds), as
// runIndependentClients runs them. It logs each cell's mean and worst
// refused and its mean use (-v), so that a change to how clients share a
// quota is measured on every kind at once, in a second.
//
// #12's target for several clients (at most 2% refused, at least 90% used)
// is missed here as on the real servers, and the bounds below are not it:
// they keep what holds today from getting worse.
//   - At 5 per 1 s (a quarter of five each) 4.7–17% refused (the mean of
//     the eight, sliding counters the most) and 44–94% used: a client's
//     share is counted from pairs of its own answers, which see its own run
//     of requests and not the others' before and after it. Two things
//     help: a request refused with room left in a window that gives
//     nothing back shows the others' spending at once (updateShare), and
//     a refused probe comes back at a random point of the half second
//     after its latest end (cooldown), not at the same phase each time.
//     Before them, 7.9–28% refused (counting 28%, sliding 22%, express
//     9.1%, fixed 11.6%), 52–99% used. Bounded at 22% refused.
//   - At 10 per 1 s 0–4.3% refused (the mean of the eight; sliding counters
//     the most) and 45–98% used (the sliding kinds 45–51%: each client
//     holds a window it takes for a fixed one to its end), over runs with
//     -race and -shuffle. Bounded at 6% refused and 40% used. A sliding
//     counter that counts refusals and states only what is left (counting,
//     as haproxy-remaining) 3.1–4.6% and 77% used, its clients' probes of a
//     spent window spaced by their shares (apart): 8.0–9.6% and 80% when
//     each probed a second after its last answer, 15% when each also sent
//     all it was first told was left at once (see startFlights).
func TestScenarioFourClientSweep(t *testing.T) {
	kinds := []struct {
		name      string
		algorithm throttletest.Algorithm
		align     throttletest.Alignment
		dialect   throttletest.Dialect
		rounding  throttletest.Rounding
		counts    bool // refusals counted (CountRefused)
	}{
		{"express", throttletest.FixedWindow, throttletest.AlignFirstRequest, throttletest.IETF, throttletest.RoundUp, false},
		{"fixed", throttletest.FixedWindow, throttletest.AlignClock, throttletest.GitHub, throttletest.Truncate, false},
		{"sliding", throttletest.SlidingWindow, throttletest.AlignClock, throttletest.GitHub, throttletest.Truncate, false},
		{"gcra", throttletest.GCRA, throttletest.AlignStart, throttletest.GitHub, throttletest.RoundUp, false},
		{"tokens", throttletest.TokenBucket, throttletest.AlignStart, throttletest.IETF, throttletest.RoundUp, false},
		{"log", throttletest.SlidingLog, throttletest.AlignStart, throttletest.GitHub, throttletest.RoundUp, false},
		// Remaining only, refusals counted: haproxy's stick table as
		// haproxy-remaining sends it (realworld/).
		{"counting", throttletest.SlidingWindow, throttletest.AlignClock, throttletest.Bucket4j, throttletest.Truncate, true},
	}
	for _, limit := range []int{5, 10} {
		for _, k := range kinds {
			t.Run(fmt.Sprintf("%s/%d", k.name, limit), func(t *testing.T) {
				quota := throttletest.Quota{Limit: limit, Window: time.Second, Algorithm: k.algorithm, Align: k.align, CountRefused: k.counts}
				used, refused, worst := overSeeds(t, throttletest.Config{Quota: quota, Dialect: k.dialect, ResetRounding: k.rounding}, 12)
				t.Logf("four clients, %d per 1 s: %.1f%% refused (worst %.1f%%), %.1f%% used", limit, 100*refused, 100*worst, 100*used)
				if limit < 10 {
					if refused > 0.22 {
						t.Errorf("%.1f%% refused, want <= 22%%", 100*refused)
					}
					return
				}
				if refused > 0.06 {
					t.Errorf("%.1f%% refused, want <= 6%%", 100*refused)
				}
				if used < 0.40 {
					t.Errorf("%.1f%% of the quota used, want >= 40%%", 100*used)
				}
			})
		}
	}
}

// TestScenarioFourClientsOnRoundedUpEpochResets: four buckets with no store
// between them on a fixed window from the first request, 30 per 3 s, whose
// Unix resets are rounded up (express-rate-limit's legacy headers). Each
// window's turn is seen only by a request that finds it: spent before its
// end and held to its reset, each window opened a second late and was read
// 4 s long, 68–71% of the quota used on every seed. Spread to the soonest
// reset until the kind is shown (spread), the turn is seen: 79–93% over
// the eight seeds in 43 runs, -race among them (a seed moves with the
// goroutines' order, 68–95%). Bounded at 76%: the cycle a second late uses
// 75%.
func TestScenarioFourClientsOnRoundedUpEpochResets(t *testing.T) {
	quota := throttletest.Quota{Limit: 30, Window: 3 * time.Second, Algorithm: throttletest.FixedWindow, Align: throttletest.AlignFirstRequest}
	used, refused, _ := overSeeds(t, throttletest.Config{Quota: quota, Dialect: throttletest.GitHub, ResetRounding: throttletest.RoundUp}, 4)
	t.Logf("four clients: %.1f%% refused, %.1f%% used", 100*refused, 100*used)
	assert.LessOrEqual(t, refused, 0.02)
	assert.GreaterOrEqual(t, used, 0.76, "windows read a second long use 75%")
}

// TestScenarioFourClientsOnALogThatBlocks: four buckets with no store
// between them on NestJS's throttler, a sliding log of 30 per 3 s whose
// reset is a record's that gates nothing (AlignFirstRequest) and whose
// request over the limit blocks the quota for 3 s (Quota.Block), after
// which the log starts over; its 429 carries Retry-After alone
// (BareRefusals). Each refusal costs every client a window. Measured at
// 8601c0f over 60 runs of the eight seeds (10 under -race): 1.2–4.4%
// refused on average (at most 4.9% by seed), 71–78% of the quota used. The
// real NestJS, four clients, 12 s traces: 0–4 429s and 62–83% used; traced,
// the clients' shares, each measured while others were held or spent more,
// added up to 1.2–1.7, and together they spent what was left faster than
// the log gave it back: at a record's turn they grew their caps at their
// shares of the window's count spread evenly, where the log gave back 2 in
// its first second and 6 at its end. Grown from each client's own returns
// once the log is nearly spent (growsAtReturns): 0–2.5% refused (0.9% on
// average) and 75–82% used over 60 runs, and 0.6–2.3% and 74–79% in 10
// under -race. (With the log's own reset, which moves on with each request,
// the clients read a bucket and measured its rate: 0–2.6% refused and
// 82–90% used; not NestJS.) The four-client target of 90% used is missed on
// it, 2% refused on some runs; bounded here at 4% and 70%.
func TestScenarioFourClientsOnALogThatBlocks(t *testing.T) {
	quota := throttletest.Quota{Limit: 30, Window: 3 * time.Second, Algorithm: throttletest.SlidingLog, Align: throttletest.AlignFirstRequest, Block: 3 * time.Second}
	used, refused, worst := overSeeds(t, throttletest.Config{Quota: quota, Dialect: throttletest.IETF, NoPolicy: true, BareRefusals: true}, 4)
	t.Logf("four clients: %.1f%% refused (worst %.1f%%), %.1f%% used", 100*refused, 100*worst, 100*used)
	assert.LessOrEqual(t, refused, 0.04)
	assert.GreaterOrEqual(t, used, 0.70)
}

// seeds is how many schedules overSeeds runs.
const seeds = 8

// overSeeds runs four independent clients (runIndependentClients) on the
// kit's server as server configures it, answers 1 ms away, for the given
// number of windows, once for each of seeds schedules (the kit's 3 ms of
// Jitter drawn from each seed), and returns the mean shares of the quota
// used and of answers refused, and the worst refused.
func overSeeds(t *testing.T, server throttletest.Config, windows int) (used, refused, worst float64) {
	server.Latency, server.Jitter = time.Millisecond, 3*time.Millisecond
	for seed := range uint64(seeds) {
		server.Seed = seed
		synctest.Test(t, func(t *testing.T) {
			u, r := runIndependentClients(t, server, windows)
			used += u / seeds
			refused += r / seeds
			worst = max(worst, r)
		})
	}
	return used, refused, worst
}

// TestModelOneFlightOnlyForTheFirstAnswers: until the share is seen, on a
// server that states what is left and no window, one request in flight at a
// time (startFlights); not for good, for a bucket that refills as fast as
// they spend it shows no spending to count, and not where a window's steady
// rate paces them.
func TestModelOneFlightOnlyForTheFirstAnswers(t *testing.T) {
	m := testModel()
	p := m.observe(ans(1, 1, 0, 0.001, -1, 9, 0))
	assert.Equal(t, 1, p.flights, "one at a time after the first answer")
	at := 0.001
	for seq := 2.0; p.flights > 0 && seq < 100; seq++ {
		p = m.observe(ans(seq, seq, at, at+0.001, -1, 9, 0)) // as much left each time
		at += 0.002
		if p.flights == 0 {
			assert.False(t, m.shareSeen)
			assert.EqualValues(t, 2*countedEnough+1, m.answers, "no limit after the first answers")
		}
	}
	assert.Zero(t, m.observe(ans(100, 100, at, at+0.001, -1, 9, 0)).flights, "and none after")

	m = testModel()
	m.pooled = true // a store counts every process's requests: no share to find
	assert.Zero(t, m.observe(ans(1, 1, 0, 0.001, -1, 9, 0)).flights)
	m = testModel()
	assert.Zero(t, m.observe(ans(1, 1, 0, 0.001, 30, 29, 3)).flights, "a window of 3 s: paced at its steady rate instead")
}

// TestModelFirstPace: the first answer of a zero-config bucket counts its
// request against the rate it sets only where others were counted before it
// (firstPace).
func TestModelFirstPace(t *testing.T) {
	for _, tc := range []struct {
		name    string
		m       model
		o       observation
		want    bool
		comment string
	}{
		{"others counted", testModel(), ans(1, 1, 0.5, 0.51, 10, 5, 1.51), true, "paced from its send"},
		{"alone", testModel(), ans(1, 1, 0.5, 0.51, 10, 9, 1.51), false, "all but its request left: starts full"},
		{"told", newModel(float64(10*time.Minute), PaceEven, 10), ans(1, 1, 0.5, 0.51, 10, 5, 1.51), false, "admitted at the told rate already"},
		{"no flight", testModel(), func() observation { o := ans(1, 1, 0.5, 0.51, 10, 5, 1.51); o.inflight = -1; return o }(), false, "not known to be the bucket's"},
		{"no limit stated", testModel(), ans(1, 1, 0.5, 0.51, -1, 5, 1.51), false, "Remaining alone says nothing of others"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.m.observe(tc.o)
			assert.Equal(t, tc.want, p.paceFirst, tc.comment)
			if tc.want {
				assert.Equal(t, secs(0.5), p.firstSent)
				assert.False(t, tc.m.observe(ans(2, 2, 0.62, 0.63, 10, 3, 1.63)).paceFirst, "the first answer only")
			}
		})
	}
}

// TestModelOthersProbeASpentQuotaApart: on a server that states what is
// left and no reset, a client that others share the quota with retries a
// spent window, and a 429, 1/share as far apart as a lone client would
// (apart); what is left is spread over the same second either way.
func TestModelOthersProbeASpentQuotaApart(t *testing.T) {
	for _, tc := range []struct {
		name        string
		others      float64 // the others' requests the server counts for each of this client's
		maxCooldown time.Duration
	}{{"alone", 0, 10 * time.Minute}, {"shared", 3, 10 * time.Minute}, {"shared, MaxCooldown 1.5 s", 3, 1500 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			// Eleven requests one at a time, the last told some left.
			m := newModel(float64(tc.maxCooldown), PaceEven, 0)
			per := 1 + tc.others
			var p plan
			for i := 0.0; i <= 10; i++ {
				p = m.observe(ans(1+i, 1+i, 0.1*i, 0.1*i+0.01, -1, per*(12-i)-1, 0))
			}
			require.Equal(t, tc.others == 0, m.share == 1, "share %v", m.share)
			assert.Equal(t, secs(2.01), p.capEnd, "what is left is spread over a second")

			p = m.observe(ans(12, 12, 1.1, 1.11, -1, 0, 0))
			apart := min(sec/m.share, float64(tc.maxCooldown))
			assert.InDelta(t, 1.11*sec+apart, float64(p.capEnd), 1e3, "a spent window is probed 1/share seconds on, within MaxCooldown")

			p = m.observe(refused(ans(13, 13, 1.2, 1.21, -1, 0, 0), 0))
			require.True(t, p.holdOn)
			hold := p.hold.sub(secs(1.21))
			backoff := min(minBackoff/m.share, float64(tc.maxCooldown))
			assert.GreaterOrEqual(t, hold, 0.75*backoff, "a 429 backs off 1/share as long")
			assert.LessOrEqual(t, hold, min(1.25*backoff, float64(tc.maxCooldown)))
		})
	}
}

// TestModelBurstInFlightAtATurnIsNoSlidingWindow: a fixed window of 50
// turns while a burst of this client's is in flight, and the first answer
// of the new window finds the requests admitted after its own counted
// before it: born short by what was in flight, not by a sliding window's
// old count (reordered). (The kit's fixed window of 50 per 5 s at a phase
// of 250 ms: a burst of eight at the turn, answered out of order across
// it, read as a sliding window whose cap grew, and refused in 1–2% of
// runs.)
func TestModelBurstInFlightAtATurnIsNoSlidingWindow(t *testing.T) {
	for _, tc := range []struct {
		name     string
		admitted float64 // when the first answer of the new window came
		kind     int
	}{
		{"a burst in flight", 48, kindUnknown},
		{"only its own two before it in flight", 43, kindRefill},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testModel()
			for i := 1.0; i <= 40; i++ { // a window of 50 at 10/s
				at := 0.1 * (i - 1)
				m.observe(ans(i, i, at, at+0.01, 50, 50-i, 5))
			}
			require.Equal(t, 5*sec, m.winLen)
			// 41 to 48 go at once at 5.2; 43's answer comes first, told
			// 42 left: five more counted before it than its own two.
			o := ans(43, tc.admitted, 5.2, 5.21, 50, 42, 10.21)
			o.behind = 2 // 41 and 42
			m.observe(o)
			assert.Equal(t, 1, m.crossings)
			assert.Equal(t, tc.kind, m.kind)
		})
	}
}
