package realworld_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-throttle/throttle/realworld"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxXRate429 is the share of 429s that x/time/rate, told the quota and
// pacing with a burst of 1, may see from any server: whatever throttle's
// model does, a client at the steady rate must be (nearly) welcome, or the
// server or the harness is wrong. Servers that refuse the steady rate
// itself (Server.RefusesSteadyRate) are the exception.
const maxXRate429 = 0.05

// options are the runs' options: REALWORLD_DURATION (a time.Duration) if
// set, else 3 s, or 1.5 s with -short.
func options(t *testing.T) realworld.Options {
	t.Helper()
	o := realworld.Options{Duration: 3 * time.Second}
	if testing.Short() {
		o.Duration = 1500 * time.Millisecond
	}
	if v := os.Getenv("REALWORLD_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err, "REALWORLD_DURATION")
		o.Duration = d
	}
	return o
}

// limited are the client kinds that limit themselves; -short runs two.
func limited() []realworld.Client {
	if testing.Short() {
		return []realworld.Client{realworld.ZeroConfig, realworld.XRate}
	}
	return []realworld.Client{realworld.ZeroConfig, realworld.ToldQuota, realworld.XRate, realworld.FourProcesses}
}

// check logs r and asserts that its counts add up. It skips the test if
// the server could not start here (see requireAvailable).
func check(t *testing.T, r realworld.Result, err error) {
	t.Helper()
	requireAvailable(t, err)
	t.Log(r)
	require.NoError(t, r.Check(), "the counts of %s × %s do not add up", r.Server.Name, r.Client)
}

// requireAvailable fails t on err, but skips it if err is that a server
// could not start here (nginx or node not installed), unless CI=true, where
// it must.
func requireAvailable(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, realworld.ErrUnavailable) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skip(err)
	}
	require.NoError(t, err)
}

// runServers runs c against every server at once (t.Parallel would hold
// them to -parallel, GOMAXPROCS by default) and returns the results and
// errors in the order of realworld.Servers.
func runServers(c realworld.Client, o realworld.Options) ([]realworld.Result, []error) {
	servers := realworld.Servers()
	res := make([]realworld.Result, len(servers))
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() { res[i], errs[i] = realworld.Run(context.Background(), s, c, o) })
	}
	wg.Wait()
	return res, errs
}

// TestRealWorld runs each limited client kind against every server (the
// servers at once), then the no-limit baseline against each server alone.
// It asserts what holds whatever the model does; REALWORLD_STRICT=1 asserts
// throttle's targets too.
func TestRealWorld(t *testing.T) {
	o := options(t)
	strict := os.Getenv("REALWORLD_STRICT") == "1"
	for _, c := range limited() {
		t.Run(c.Slug(), func(t *testing.T) {
			res, errs := runServers(c, o)
			for i, s := range realworld.Servers() {
				t.Run(s.Name, func(t *testing.T) {
					r := res[i]
					check(t, r, errs[i])
					if c == realworld.XRate && !s.RefusesSteadyRate {
						assert.LessOrEqual(t, r.Share429(), maxXRate429,
							"%s × x/time/rate told the quota: %d of %d answers were 429", s.Name, r.TooMany, r.Answers())
					}
					if tg, ok := realworld.TargetFor(s, c); ok && strict {
						assert.NoError(t, tg.Meets(r), "%s × %s: target", s.Name, c)
					}
				})
			}
		})
	}
	// One server at a time: a client with no limit keeps the CPU busy.
	t.Run(realworld.NoLimit.Slug(), func(t *testing.T) {
		for _, s := range realworld.Servers() {
			t.Run(s.Name, func(t *testing.T) {
				r, err := realworld.Run(context.Background(), s, realworld.NoLimit, o)
				check(t, r, err)
				assert.Greater(t, r.Share429(), 0.5,
					"%s refused %d of %d answers to a client with no limit, want most", s.Name, r.TooMany, r.Answers())
				most := s.MostAdmitted(r.Duration)
				assert.LessOrEqual(t, float64(r.OK), most,
					"%s admitted %d to a client with no limit, want at most %.0f", s.Name, r.OK, most)
			})
		}
	})
}

func TestQuotaCapacity(t *testing.T) {
	tests := []struct {
		q    realworld.Quota
		d    time.Duration
		want float64
	}{
		{realworld.Quota{Limit: 30, Window: 3 * time.Second, Burst: 30}, 3 * time.Second, 60},
		{realworld.Quota{Limit: 10, Window: time.Second, Burst: 6}, 3 * time.Second, 36},
		{realworld.Quota{Limit: 30, Window: 3 * time.Second}, 6 * time.Second, 60},
	}
	for _, tt := range tests {
		assert.InDelta(t, tt.want, tt.q.Capacity(tt.d), 1e-9, "%+v.Capacity(%v)", tt.q, tt.d)
	}
}

func TestTargetsCoverThrottleClients(t *testing.T) {
	for _, s := range realworld.Servers() {
		for _, c := range []realworld.Client{realworld.ZeroConfig, realworld.ToldQuota, realworld.FourProcesses} {
			_, ok := realworld.TargetFor(s, c)
			assert.True(t, ok, "TargetFor(%s, %s) has no target", s.Name, c)
		}
	}
}

// TestHAProxyRemainingStatesItsQuota: haproxy-remaining's header counts
// down from the limit that SetQuota set, the one its deny rule enforces
// (it stated 30 less the request rate whatever the limit, so runs with
// -limit 20 were told 10 more than was left).
func TestHAProxyRemainingStatesItsQuota(t *testing.T) {
	require.NoError(t, realworld.SetQuota(20, 2*time.Second))
	t.Cleanup(func() { require.NoError(t, realworld.SetQuota(30, 3*time.Second)) })
	srvs, err := realworld.ServersNamed("haproxy-remaining")
	require.NoError(t, err)
	inst, err := srvs[0].Start()
	requireAvailable(t, err)
	defer inst.Close()
	resp, err := http.Get(inst.URL)
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, "19", resp.Header.Get("X-Rate-Limit-Remaining"))
}

// TestRealWorldLatency runs a zero-config Transport against servers whose
// answers come a network's round trip away (100 ms, ±50% each way), as a
// real API's do: requests in flight are counted before their answers
// come, and Remaining reads lower than on loopback. A token bucket kept
// nearly full by its steady rate then looks like a short sliding log, and
// a refusal at that log's pace must undo the reading (tollbooth, 6 s: 49
// and 37 of 70 served, three 429s each, before it; 67 of 70 and one or
// two since: the reading is made, and refused, once a run).
func TestRealWorldLatency(t *testing.T) {
	o := options(t)
	o.Duration, o.Latency = 2*o.Duration, 100*time.Millisecond
	srvs, err := realworld.ServersNamed("tollbooth", "ulule")
	require.NoError(t, err)
	for _, s := range srvs {
		t.Run(s.Name, func(t *testing.T) {
			r, err := realworld.Run(context.Background(), s, realworld.ZeroConfig, o)
			check(t, r, err)
			assert.LessOrEqual(t, r.TooMany, int64(3), "%s: %d of %d answers were 429", s.Name, r.TooMany, r.Answers())
			assert.GreaterOrEqual(t, r.Used(), 0.85, "%s: %d served of %.0f", s.Name, r.OK, s.Quota.Capacity(r.Duration))
		})
	}
}

// TestRealWorldTurnSeen: a window whose kind is not yet known is spread to
// its soonest reset, so that a request is left to find its turn. Four
// clients on express-rate-limit's legacy headers (Unix resets rounded up, a
// window from the first request) each spent their part early, saw no turn,
// and were held to resets a second late: windows of 4 s for 3, 84–85 of
// 120 served in 12 s; 109–115 since. A lone client on NestJS's log spent
// its first window to 0 just before the log gave back and was held a
// second: 107 of 120; 115 since. Both run at once, four times the runs'
// duration (12 s by default): a window a second late costs a quarter of
// each, and a shorter run hides it in its first window. The four draw 0–3
// 429s in traces, and drew 5 (113 served) in one CI run under -race: a
// client held across a turn reads the fixed window as sliding, an open
// miss of the four-client target; the bound here is use, and 429s within
// 5% of the answers.
func TestRealWorldTurnSeen(t *testing.T) {
	runAtOnce(t, 4, []bounded{
		{"express-legacy", realworld.FourProcesses, 0.85, 6},
		{"nest", realworld.ZeroConfig, 0.92, 1},
	})
}

// bounded is a run of a client against a server, and the bounds it must
// keep: at least minUsed of the quota used, at most max429 429s.
type bounded struct {
	server  string
	client  realworld.Client
	minUsed float64
	max429  int64
}

// runAtOnce runs each of runs against its own server, all at once, for
// times the runs' duration (options), and asserts their bounds.
func runAtOnce(t *testing.T, times time.Duration, runs []bounded) {
	t.Helper()
	o := options(t)
	o.Duration *= times
	res := make([]realworld.Result, len(runs))
	errs := make([]error, len(runs))
	var wg sync.WaitGroup
	for i, run := range runs {
		srvs, err := realworld.ServersNamed(run.server)
		require.NoError(t, err)
		wg.Go(func() { res[i], errs[i] = realworld.Run(context.Background(), srvs[0], run.client, o) })
	}
	wg.Wait()
	for i, run := range runs {
		t.Run(run.server, func(t *testing.T) {
			r := res[i]
			check(t, r, errs[i])
			assert.LessOrEqual(t, r.TooMany, run.max429, "%s × %s: %d of %d answers were 429", run.server, run.client, r.TooMany, r.Answers())
			assert.GreaterOrEqual(t, r.Used(), run.minUsed, "%s × %s: %d served of %.0f", run.server, run.client, r.OK, r.Server.Quota.Capacity(r.Duration))
		})
	}
}

// TestRealWorldFirstHoldAtWindowLength: a server that states nothing is
// probed, in its first hold, just after each length windows are given,
// from the first request. A fixed window from the first request (ulule's,
// headers off) and a sliding log (Flask-Limiter's, headers off), 30 per
// 3 s, end just there: found at 3 s, and their rate measured as 30 over
// 3 s. An exponential backoff found them up to a second late and measured
// the rate over that time: 93–109 of 120 served in 12 s (14 traces; 91–102
// in two runs of this test), 113–117 probed at the lengths, and 120 held
// then to the ends of the window found. Both at once, four times the runs'
// duration (12 s by default).
func TestRealWorldFirstHoldAtWindowLength(t *testing.T) {
	runAtOnce(t, 4, []bounded{ // at most 6 429s: 5% of about 125 answers
		{"ulule-bare", realworld.ZeroConfig, 0.92, 6},
		{"flask-bare", realworld.ZeroConfig, 0.92, 6},
	})
}

// TestRealWorldSharedFirstWindowAtItsLength: four clients on one of those
// servers take about 7 each of its first window and are served again at
// 3 s; each one's 7 over 3 s is its rate. Doubling from the guess of a
// burst that small, as after a bucket's quick refill, together they spent
// the next window in under a second and each drew a 429: 19–25 429s in
// 12 s traces (24 in six of eight), against 17–18 since. Most of what is
// left is the first hold's, a 429 for each client at each length on the
// way: the five-percent target is missed. Both at once, four times the
// runs' duration (12 s by default, as in the traces).
func TestRealWorldSharedFirstWindowAtItsLength(t *testing.T) {
	runAtOnce(t, 4, []bounded{
		{"ulule-bare", realworld.FourProcesses, 0.90, 22},
		{"flask-bare", realworld.FourProcesses, 0.90, 22},
	})
}

// TestRealWorldFourOnStore: four processes sharing one store (four
// zero-config Transports on one MemoryStore, as on one redisstore) hold
// the quota of servers that give back before the reset they state, as one
// client does. A Remaining 0 until a reset was shared as a hold that never
// shortened, a probe went from each process at a hold's end, and the store
// refilled while held: httprate's counter served 75–78 of 120 in 12 s
// traces, a 429 and 3 s held at most windows' turns, NestJS's log 89;
// 116–117 and 110 since. Three servers at once, four times the runs'
// duration (12 s by default).
func TestRealWorldFourOnStore(t *testing.T) {
	runAtOnce(t, 4, []bounded{
		{"httprate", realworld.FourOnStore, 0.85, 3},
		{"nest", realworld.FourOnStore, 0.85, 3},
		{"express-legacy", realworld.FourOnStore, 0.85, 3},
	})
}
