package throttle

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-throttle/throttle/throttletest"
)

// TestScenarioSweep runs a lone zero-config bucket against every quota kind
// the kit plays, in each dialect that states what is left, 30 s each: fixed
// windows (keeping to the server's clock, or opened by the first request),
// sliding-window counters, sliding logs, token buckets holding half their
// limit and GCRA; resets rounded up or truncated; quotas of 10 per 1 s, 30
// per 3 s, 5 per 1 s and 60 per 10 s; the server's clock at three phases;
// answers 1–6 ms late in shuffled orders. It fails on a cell that refuses
// more than 3% of its requests, and logs (-v) the cells short of the
// model's targets (at least 90% used, at most 1% refused), which is how
// the kit's gaps are counted: `go test -run ScenarioSweep -v .`.
func TestScenarioSweep(t *testing.T) {
	dialects := []throttletest.Dialect{throttletest.GitHub, throttletest.IETF, throttletest.IETFStructured,
		throttletest.OpenAI, throttletest.DateReset, throttletest.Bucket4j}
	type kind struct {
		alg   throttletest.Algorithm
		align throttletest.Alignment
	}
	kinds := []kind{
		{throttletest.FixedWindow, throttletest.AlignStart},
		{throttletest.FixedWindow, throttletest.AlignFirstRequest},
		{throttletest.SlidingWindow, throttletest.AlignStart},
		{throttletest.SlidingLog, throttletest.AlignStart},
		{throttletest.TokenBucket, throttletest.AlignStart},
		{throttletest.GCRA, throttletest.AlignStart},
	}
	quotas := []struct {
		limit  int
		window time.Duration
	}{{10, time.Second}, {30, 3 * time.Second}, {5, time.Second}, {60, 10 * time.Second}}
	phases := []time.Duration{0, 300 * time.Millisecond, 700 * time.Millisecond}

	cells, short := 0, 0
	for _, d := range dialects {
		for _, k := range kinds {
			for _, rounding := range []throttletest.Rounding{throttletest.RoundUp, throttletest.Truncate} {
				for _, q := range quotas {
					quota := throttletest.Quota{Limit: q.limit, Window: q.window, Algorithm: k.alg, Align: k.align}
					if k.alg == throttletest.TokenBucket {
						quota.Burst = q.limit / 2
					}
					var runs []string
					missed := false
					for _, phase := range phases {
						srv := throttletest.Config{Quota: quota, Dialect: d, ResetRounding: rounding,
							Latency: time.Millisecond, Jitter: 5 * time.Millisecond, Phase: phase}
						var o outcome
						synctest.Test(t, func(t *testing.T) {
							// A minute's MaxWait would refuse the waits behind
							// a long window's hold: the goroutines give up.
							sc := scenario{name: "sweep", server: srv, bucket: Config{MaxWait: 10 * time.Minute},
								windows: int(30 * time.Second / q.window)}
							o = sc.run(t)
						})
						if o.refusedShare() > 0.03 {
							t.Errorf("%v %v/%v rounding %v %d per %v at %v: %v", d, k.alg, k.align, rounding, q.limit, q.window, phase, o)
						}
						missed = missed || o.used < 0.90 || o.refusedShare() > 0.01
						runs = append(runs, fmt.Sprintf("%5.1f%%/%d", 100*o.used, o.refused))
					}
					cells++
					if missed {
						short++
						t.Logf("%-14v %-13v %-17v %-8v %2d/%-4v %s", d, k.alg, k.align, rounding, q.limit, q.window, strings.Join(runs, " "))
					}
				}
			}
		}
	}
	t.Logf("%d of %d cells short of a target (used %% / refused, at phases %v)", short, cells, phases)
}
