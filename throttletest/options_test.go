package throttletest_test

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-throttle/throttle/throttletest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAlignment checks where windows begin (Quota.Align, Config.Phase),
// from the OpenAI dialect's millisecond resets. The quota is 2 per 10s.
func TestAlignment(t *testing.T) {
	type step struct {
		sleep  time.Duration // before the request
		status int
		reset  string // X-Ratelimit-Reset-Requests
	}
	cases := []struct {
		name  string
		align throttletest.Alignment
		phase time.Duration
		skew  time.Duration
		steps []step
	}{
		{name: "AlignStart", steps: []step{{2500 * time.Millisecond, 200, "7.5s"}}},
		{name: "AlignStart/Phase", phase: 250 * time.Millisecond, steps: []step{
			{2500 * time.Millisecond, 200, "7.75s"},
			{7750 * time.Millisecond, 200, "10s"},
		}},
		{name: "AlignStart/negative Phase", phase: -250 * time.Millisecond, steps: []step{{2500 * time.Millisecond, 200, "7.25s"}}},
		{name: "AlignStart/Phase beyond Window", phase: 10250 * time.Millisecond, steps: []step{{2500 * time.Millisecond, 200, "7.75s"}}},
		// The bubble's clock starts at midnight: a multiple of 10s.
		{name: "AlignClock", align: throttletest.AlignClock, steps: []step{{2500 * time.Millisecond, 200, "7.5s"}}},
		// The server's clock is 3.2s ahead: its windows end at real 6.8s, 16.8s...
		{name: "AlignClock/DateSkew", align: throttletest.AlignClock, skew: 3200 * time.Millisecond, steps: []step{
			{2500 * time.Millisecond, 200, "4.3s"},
		}},
		{name: "AlignClock/DateSkew/Phase", align: throttletest.AlignClock, skew: 3200 * time.Millisecond, phase: time.Second, steps: []step{
			{2500 * time.Millisecond, 200, "5.3s"},
		}},
		{name: "AlignFirstRequest", align: throttletest.AlignFirstRequest, steps: []step{
			{2500 * time.Millisecond, 200, "10s"},
			{9900 * time.Millisecond, 200, "100ms"},
			{50 * time.Millisecond, 429, "50ms"},
			// The next window opens with the next request, 4s late.
			{4 * time.Second, 200, "10s"},
			{9999 * time.Millisecond, 200, "1ms"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := throttletest.NewHandler(throttletest.Config{
					Quota:    throttletest.Quota{Limit: 2, Window: 10 * time.Second, Align: tc.align},
					Dialect:  throttletest.OpenAI,
					Phase:    tc.phase,
					DateSkew: tc.skew,
				})
				for i, s := range tc.steps {
					time.Sleep(s.sleep)
					resp, _ := get(t, h, "/")
					got := step{s.sleep, resp.StatusCode, resp.Header.Get("X-Ratelimit-Reset-Requests")}
					require.Equal(t, s, got, "step %d", i)
				}
			})
		})
	}
}

// TestGCRA checks throttled/throttled v2's semantics: 10 per 100s (a
// request every 10s), 4 at once; the reset is the time until full.
func TestGCRA(t *testing.T) {
	type step struct {
		sleep                  time.Duration
		status                 int
		limit, remaining       string
		reset, retry, policyIn string
	}
	synctest.Test(t, func(t *testing.T) {
		h := throttletest.NewHandler(throttletest.Config{
			Quota:   throttletest.Quota{Limit: 10, Window: 100 * time.Second, Algorithm: throttletest.GCRA, Burst: 4},
			Dialect: throttletest.IETF,
		})
		steps := []step{
			{0, 200, "4", "3", "10", "", "4;w=100"},
			{0, 200, "4", "2", "20", "", "4;w=100"},
			{0, 200, "4", "1", "30", "", "4;w=100"},
			{0, 200, "4", "0", "40", "", "4;w=100"},
			{0, 429, "4", "0", "40", "10", "4;w=100"},
			// 2.5 requests' worth back: one taken leaves 1.5.
			{25 * time.Second, 200, "4", "1", "25", "", "4;w=100"},
			{0, 200, "4", "0", "35", "", "4;w=100"},
			{0, 429, "4", "0", "35", "5", "4;w=100"},
		}
		for i, s := range steps {
			time.Sleep(s.sleep)
			resp, _ := get(t, h, "/")
			got := step{
				s.sleep, resp.StatusCode,
				resp.Header.Get("RateLimit-Limit"), resp.Header.Get("RateLimit-Remaining"),
				resp.Header.Get("RateLimit-Reset"), resp.Header.Get("Retry-After"), resp.Header.Get("RateLimit-Policy"),
			}
			require.Equal(t, s, got, "step %d", i)
		}
	})
}

// TestCountRefused checks that a sliding window counting its refusals
// keeps refusing a client that sends at exactly the quota's rate, 10/s,
// for 3s, while one that does not count them refuses it once.
func TestCountRefused(t *testing.T) {
	cases := []struct {
		count bool
		want  throttletest.Counts
	}{
		{false, throttletest.Counts{Admitted: 29, Refused: 1}},
		{true, throttletest.Counts{Admitted: 10, Refused: 20}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint("CountRefused=", tc.count), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := throttletest.NewHandler(throttletest.Config{
					Quota: throttletest.Quota{
						Limit: 10, Window: time.Second,
						Algorithm: throttletest.SlidingWindow, CountRefused: tc.count,
					},
					Dialect: throttletest.None,
				})
				for range 30 {
					status(h, "/")
					time.Sleep(100 * time.Millisecond)
				}
				assert.Equal(t, tc.want, h.Stats().Counts, "Stats after 3s")
			})
		})
	}
}

// TestLeakyBucket checks nginx's limit_req (rate=2r/s burst=2, with and
// without nodelay) with the None dialect: five requests at once.
func TestLeakyBucket(t *testing.T) {
	type answer struct {
		at     time.Duration // since the requests were sent
		status int
	}
	cases := []struct {
		name    string
		noDelay bool
		refuse  int // Config.RefuseStatus
		want    []answer
	}{
		{"delay", false, 0, []answer{
			{0, 200}, {0, 429}, {0, 429}, {500 * time.Millisecond, 200}, {time.Second, 200},
		}},
		{"nodelay", true, 0, []answer{{0, 200}, {0, 200}, {0, 200}, {0, 429}, {0, 429}}},
		{"nodelay/503", true, http.StatusServiceUnavailable, []answer{{0, 200}, {0, 200}, {0, 200}, {0, 503}, {0, 503}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := throttletest.NewHandler(throttletest.Config{
					Quota: throttletest.Quota{
						Limit: 2, Window: time.Second,
						Algorithm: throttletest.LeakyBucket, Burst: 3, NoDelay: tc.noDelay,
					},
					Dialect:      throttletest.None,
					RefuseStatus: tc.refuse,
				})
				start := time.Now()
				var (
					mu      sync.Mutex
					got     []answer
					refusal *http.Response
					wg      sync.WaitGroup
				)
				for range 5 {
					wg.Go(func() {
						resp, err := (&http.Client{Transport: h}).Get("http://api.test/")
						if !assert.NoError(t, err) {
							return
						}
						resp.Body.Close()
						mu.Lock()
						defer mu.Unlock()
						got = append(got, answer{time.Since(start), resp.StatusCode})
						if resp.StatusCode != http.StatusOK {
							refusal = resp
						}
					})
				}
				wg.Wait()
				slices.SortFunc(got, func(a, b answer) int {
					return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.status, b.status))
				})
				assert.Equal(t, tc.want, got, "answers")
				// A refusal is bare: Date and nothing else.
				require.NotNil(t, refusal, "a refusal")
				assert.Equal(t, map[string]string{"date": "Sat, 01 Jan 2000 00:00:00 GMT"}, headers(refusal), "refused headers")
			})
		})
	}
}

// TestJitter checks that answers to requests sent in turn, 1ms apart,
// arrive in another order than sent, the same order on every run for a
// seed, and that each request is counted at its arrival.
func TestJitter(t *testing.T) {
	run := func(t *testing.T, seed uint64) []int {
		var order []int
		synctest.Test(t, func(t *testing.T) {
			h := throttletest.NewHandler(throttletest.Config{
				Quota:   throttletest.Quota{Limit: 100},
				Latency: 50 * time.Millisecond,
				Jitter:  100 * time.Millisecond,
				Seed:    seed,
			})
			var (
				mu sync.Mutex
				wg sync.WaitGroup
			)
			start := time.Now()
			for i := range 8 {
				wg.Go(func() {
					status(h, "/")
					mu.Lock()
					order = append(order, i)
					mu.Unlock()
				})
				synctest.Wait() // request i has arrived: it waits for its answer
				time.Sleep(time.Millisecond)
			}
			assert.Equal(t, 8, h.Stats().Total(), "counted at arrival, before any answer")
			wg.Wait()
			elapsed := time.Since(start)
			assert.GreaterOrEqual(t, elapsed, 57*time.Millisecond, "Latency is a floor")
			assert.Less(t, elapsed, 157*time.Millisecond, "Jitter is less than 100ms")
		})
		return order
	}
	// math/rand/v2's outputs for a seed are fixed (its regress_test.go).
	first := run(t, 1)
	assert.Equal(t, []int{1, 7, 4, 6, 2, 3, 5, 0}, first, "answer order with seed 1")
	assert.Equal(t, first, run(t, 1), "answer order with seed 1, again")
	assert.NotEqual(t, first, run(t, 2), "answer order with seed 2")
}

// TestClockTick checks a server that reads a cached whole-second clock, as
// gofiber's limiter does: a sliding window of 3 per 3 s gives the old
// window's count back a third at a time, as each second ticks, not
// continuously; its resets count from the last tick. The handler's ticks
// fall 200ms after its start (Phase), and so do its windows.
func TestClockTick(t *testing.T) {
	type step struct {
		at     time.Duration // since the first request
		status int
		reset  string // RateLimit-Reset
		retry  string // Retry-After
	}
	cases := []struct {
		tick  time.Duration
		steps []step
	}{
		{tick: time.Second, steps: []step{
			{0, 200, "3", ""}, {0, 200, "3", ""}, {0, 200, "3", ""},
			{2900 * time.Millisecond, 429, "1", "1"}, // read as 2.0 s: 1 s left of 3
			{3500 * time.Millisecond, 429, "3", "3"}, // read as 3.0: all of the old count weighs
			{3900 * time.Millisecond, 429, "3", "3"},
			{4000 * time.Millisecond, 200, "2", ""}, // the tick: a third comes back
			{4900 * time.Millisecond, 429, "2", "2"},
		}},
		{steps: []step{
			{0, 200, "3", ""}, {0, 200, "3", ""}, {0, 200, "3", ""},
			{2900 * time.Millisecond, 429, "1", "1"},
			{3500 * time.Millisecond, 200, "3", ""}, // opens [3.5, 6.5): ⌊3 × 2.5/3⌋ = 2 weigh
			{3900 * time.Millisecond, 429, "3", "3"},
			{4000 * time.Millisecond, 429, "3", "3"},
			{4900 * time.Millisecond, 200, "2", ""}, // ⌊3 × 1.1/3⌋ = 1 weighs

		}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint("ClockTick=", tc.tick), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := throttletest.NewHandler(throttletest.Config{
					Quota: throttletest.Quota{Limit: 3, Window: 3 * time.Second,
						Algorithm: throttletest.SlidingWindow, Align: throttletest.AlignFirstRequest},
					Dialect:   throttletest.IETF,
					ClockTick: tc.tick,
					Phase:     200 * time.Millisecond,
				})
				time.Sleep(200 * time.Millisecond)
				start := time.Now()
				for i, s := range tc.steps {
					time.Sleep(time.Until(start.Add(s.at)))
					resp, _ := get(t, h, "/")
					got := step{s.at, resp.StatusCode, resp.Header.Get("RateLimit-Reset"), resp.Header.Get("Retry-After")}
					require.Equal(t, s, got, "step %d", i)
				}
			})
		})
	}
}

// TestBareRefusalsAndNoPolicy checks gofiber's answers: the draft's
// RateLimit fields without a policy, and refusals with Retry-After alone.
func TestBareRefusalsAndNoPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := throttletest.NewHandler(throttletest.Config{
			Quota:        throttletest.Quota{Limit: 1, Window: 3 * time.Second},
			Dialect:      throttletest.IETF,
			BareRefusals: true,
			NoPolicy:     true,
		})
		resp, _ := get(t, h, "/")
		assert.Equal(t, map[string]string{"date": "Sat, 01 Jan 2000 00:00:00 GMT",
			"ratelimit-limit": "1", "ratelimit-remaining": "0", "ratelimit-reset": "3"}, headers(resp))
		time.Sleep(time.Second)
		resp, _ = get(t, h, "/")
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		assert.Equal(t, map[string]string{"date": "Sat, 01 Jan 2000 00:00:01 GMT", "retry-after": "2"}, headers(resp))
	})
}
