package throttletest_test

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-throttle/throttle/throttletest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bubbleUnix is the Unix time at which a synctest bubble starts
// (2000-01-01 00:00:00 UTC).
const bubbleUnix = 946684800

func TestAlgorithms(t *testing.T) {
	type step struct {
		sleep     time.Duration // before the requests
		n         int           // requests sent; 0: 1
		status    int           // of every request
		remaining string        // RateLimit-Remaining of the last one
		reset     string        // RateLimit-Reset of the last one
		retry     string        // Retry-After of the last one; "": absent
	}
	cases := []struct {
		alg   throttletest.Algorithm
		steps []step
	}{
		{throttletest.FixedWindow, []step{
			{n: 10, status: 200, remaining: "0", reset: "10"},
			{status: 429, remaining: "0", reset: "10", retry: "10"},
			{sleep: 9500 * time.Millisecond, status: 429, remaining: "0", reset: "1", retry: "1"},
			{sleep: 500 * time.Millisecond, status: 200, remaining: "9", reset: "10"},
			{sleep: 25 * time.Second, status: 200, remaining: "9", reset: "5"},
		}},
		{throttletest.SlidingWindow, []step{
			{n: 10, status: 200, remaining: "0", reset: "10"},
			{status: 429, remaining: "0", reset: "10", retry: "10"},
			// The window the reset pointed at has begun, but the estimate
			// is still 10×(1−0) + 0.
			{sleep: 10 * time.Second, status: 429, remaining: "0", reset: "10", retry: "10"},
			// 10×0.75 = 7.5 leaves room for 3 more (estimate < 10).
			{sleep: 2500 * time.Millisecond, n: 3, status: 200, remaining: "0", reset: "8"},
			{status: 429, remaining: "0", reset: "8", retry: "8"},
			// 3×0.5 + 1 = 2.5 → 10 − ⌈2.5⌉.
			{sleep: 12500 * time.Millisecond, status: 200, remaining: "7", reset: "5"},
		}},
		{throttletest.TokenBucket, []step{
			{n: 10, status: 200, remaining: "0", reset: "10"},
			{status: 429, remaining: "0", reset: "10", retry: "1"},
			// 2.5 tokens back; taking 2 leaves 0.5, 9.5s from full.
			{sleep: 2500 * time.Millisecond, n: 2, status: 200, remaining: "0", reset: "10"},
			{status: 429, remaining: "0", reset: "10", retry: "1"},
			{sleep: 20 * time.Second, status: 200, remaining: "9", reset: "1"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.alg.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := throttletest.NewHandler(throttletest.Config{
					Quota:   throttletest.Quota{Limit: 10, Window: 10 * time.Second, Algorithm: tc.alg},
					Dialect: throttletest.IETF,
				})
				var want throttletest.Counts
				for i, s := range tc.steps {
					time.Sleep(s.sleep)
					var resp *http.Response
					for range max(s.n, 1) {
						resp, _ = get(t, h, "/")
						require.Equal(t, s.status, resp.StatusCode, "step %d: status", i)
						if s.status == http.StatusOK {
							want.Admitted++
						} else {
							want.Refused++
						}
					}
					got := step{
						sleep: s.sleep, n: s.n, status: resp.StatusCode,
						remaining: resp.Header.Get("RateLimit-Remaining"),
						reset:     resp.Header.Get("RateLimit-Reset"),
						retry:     resp.Header.Get("Retry-After"),
					}
					require.Equal(t, s, got, "step %d", i)
				}
				assert.Equal(t, want, h.Stats().Counts, "Stats")
			})
		})
	}
}

func TestShedEvery(t *testing.T) {
	cases := []struct {
		name    string
		dialect throttletest.Dialect
		after   time.Duration // Config.ShedRetryAfter
		retry   string        // Retry-After of a 503
	}{
		{"GitHub", throttletest.GitHub, 0, "1"},
		{"IETF/ShedRetryAfter", throttletest.IETF, 2500 * time.Millisecond, "3"},
		{"None", throttletest.None, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := throttletest.NewHandler(throttletest.Config{
					Dialect:        tc.dialect,
					ShedEvery:      3,
					ShedRetryAfter: tc.after,
				})
				wantStatus := []int{200, 200, 503, 200, 200, 503}
				var gotStatus []int
				for range wantStatus {
					resp, _ := get(t, h, "/")
					gotStatus = append(gotStatus, resp.StatusCode)
					if resp.StatusCode == http.StatusServiceUnavailable {
						assert.Equal(t, tc.retry, resp.Header.Get("Retry-After"), "Retry-After of a 503")
					}
				}
				assert.Equal(t, wantStatus, gotStatus)
				// Shed requests used no quota: 4 of 10 are used.
				assert.Equal(t, throttletest.Counts{Admitted: 4, Shed: 2}, h.Stats().Counts)
				if tc.dialect == throttletest.GitHub {
					resp, _ := get(t, h, "/")
					assert.Equal(t, "5", resp.Header.Get("X-RateLimit-Remaining"))
				}
			})
		})
	}
}

func TestResources(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := throttletest.NewHandler(throttletest.Config{
			Quota: throttletest.Quota{Limit: 3, Window: time.Hour},
			Resources: map[string]throttletest.Quota{
				"search": {Limit: 2, Window: time.Minute},
			},
			Route: func(r *http.Request) string {
				switch r.URL.Path {
				case "/search":
					return "search"
				case "/graphql":
					return "graphql"
				}
				return "" // the default resource
			},
		})
		cases := []struct {
			path, resource string
			status         int
			remaining      string
			reset          int64
		}{
			{"/search", "search", 200, "1", bubbleUnix + 60},
			{"/search", "search", 200, "0", bubbleUnix + 60},
			{"/search", "search", 429, "0", bubbleUnix + 60},
			// Spending "search" left the other resources untouched.
			{"/repos", "core", 200, "2", bubbleUnix + 3600},
			{"/graphql", "graphql", 200, "2", bubbleUnix + 3600},
			{"/graphql", "graphql", 200, "1", bubbleUnix + 3600},
			{"/", "core", 200, "1", bubbleUnix + 3600},
		}
		for _, tc := range cases {
			resp, _ := get(t, h, tc.path)
			assert.Equal(t, tc.status, resp.StatusCode, "GET %s: status", tc.path)
			assert.Equal(t, tc.resource, resp.Header.Get("X-RateLimit-Resource"), "GET %s: resource", tc.path)
			assert.Equal(t, tc.remaining, resp.Header.Get("X-RateLimit-Remaining"), "GET %s: remaining", tc.path)
			assert.Equal(t, tc.reset, mustInt(t, resp.Header.Get("X-RateLimit-Reset")), "GET %s: reset", tc.path)
		}
		assert.Equal(t, throttletest.Stats{
			Counts: throttletest.Counts{Admitted: 6, Refused: 1},
			Resources: map[string]throttletest.Counts{
				"search":  {Admitted: 2, Refused: 1},
				"core":    {Admitted: 2},
				"graphql": {Admitted: 2},
			},
			Series: []throttletest.Point{{Second: 0, Counts: throttletest.Counts{Admitted: 6, Refused: 1}}},
		}, h.Stats())
	})
}

func TestSecondaryPerMinute(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := throttletest.NewHandler(throttletest.Config{
			Quota:     throttletest.Quota{Limit: 100, Window: time.Hour},
			Secondary: throttletest.SecondaryLimit{PerMinute: 3},
		})
		for range 3 {
			resp, _ := get(t, h, "/")
			require.Equal(t, http.StatusOK, resp.StatusCode)
		}
		resp, body := get(t, h, "/")
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
		assert.Equal(t, "60", resp.Header.Get("Retry-After"))
		// The primary quota is untouched and says so: go-github tells the
		// two limits apart by this, and by the documentation_url.
		assert.Equal(t, "97", resp.Header.Get("X-RateLimit-Remaining"))
		assert.Contains(t, body, `rate-limits-for-the-rest-api#about-secondary-rate-limits"`)

		time.Sleep(45 * time.Second)
		resp, _ = get(t, h, "/")
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
		assert.Equal(t, "15", resp.Header.Get("Retry-After"))

		time.Sleep(15 * time.Second)
		resp, _ = get(t, h, "/")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "96", resp.Header.Get("X-RateLimit-Remaining"))
		assert.Equal(t, throttletest.Counts{Admitted: 4, Secondary: 2}, h.Stats().Counts)
	})
}

func TestSecondaryConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := throttletest.NewHandler(throttletest.Config{
			Dialect:   throttletest.IETF,
			Secondary: throttletest.SecondaryLimit{Concurrent: 2, Status: http.StatusTooManyRequests},
			Latency:   time.Second,
		})
		start := time.Now()
		done := make(chan int, 2)
		for range 2 {
			go func() { done <- status(h, "/") }()
		}
		synctest.Wait() // both are being served, for a second

		resp, _ := get(t, h, "/")
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "third request at once")
		assert.Equal(t, "1", resp.Header.Get("Retry-After"))
		assert.Equal(t, "8", resp.Header.Get("RateLimit-Remaining"))
		assert.Equal(t, time.Second, time.Since(start), "the refusal took Latency too")

		assert.Equal(t, http.StatusOK, <-done)
		assert.Equal(t, http.StatusOK, <-done)
		resp, _ = get(t, h, "/")
		assert.Equal(t, http.StatusOK, resp.StatusCode, "once the first two are answered")
		assert.Equal(t, throttletest.Counts{Admitted: 3, Secondary: 1}, h.Stats().Counts)
	})
}

func TestSeries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := throttletest.NewHandler(throttletest.Config{Quota: throttletest.Quota{Limit: 2}})
		for _, sleep := range []time.Duration{0, 0, 0, 1500 * time.Millisecond, 3500 * time.Millisecond} {
			time.Sleep(sleep)
			get(t, h, "/")
		}
		assert.Equal(t, []throttletest.Point{
			{Second: 0, Counts: throttletest.Counts{Admitted: 2, Refused: 1}},
			{Second: 1, Counts: throttletest.Counts{Admitted: 1}},
			{Second: 5, Counts: throttletest.Counts{Admitted: 1}},
		}, h.Stats().Series)
	})
}

// TestZeroHandler checks that a zero Handler is the zero Config's API, its
// clock started by its first request.
func TestZeroHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var h throttletest.Handler
		time.Sleep(5 * time.Second)
		for i := range throttletest.DefaultLimit {
			resp, _ := get(t, &h, "/")
			require.Equal(t, http.StatusOK, resp.StatusCode, "request %d", i)
		}
		resp, _ := get(t, &h, "/")
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		assert.Equal(t, "946684806", resp.Header.Get("X-RateLimit-Reset"))
		assert.Equal(t, "core", resp.Header.Get("X-RateLimit-Resource"))
	})
}

// TestConcurrent checks that many goroutines at the same instant get
// exactly Limit admissions.
func TestConcurrent(t *testing.T) {
	cases := []throttletest.Quota{
		{Algorithm: throttletest.FixedWindow},
		{Algorithm: throttletest.SlidingWindow},
		{Algorithm: throttletest.TokenBucket},
		{Algorithm: throttletest.GCRA},
		{Algorithm: throttletest.LeakyBucket},
		{Algorithm: throttletest.FixedWindow, Align: throttletest.AlignFirstRequest},
		{Algorithm: throttletest.SlidingWindow, CountRefused: true},
	}
	for _, q := range cases {
		q.Limit = 10
		t.Run(fmt.Sprintf("%+v", q), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := throttletest.NewHandler(throttletest.Config{Quota: q})
				var wg sync.WaitGroup
				for range 100 {
					wg.Go(func() { status(h, "/") })
				}
				wg.Wait()
				assert.Equal(t, throttletest.Counts{Admitted: 10, Refused: 90}, h.Stats().Counts)
			})
		})
	}
}

func TestNewHandlerPanics(t *testing.T) {
	cases := []struct {
		name string
		c    throttletest.Config
		want string
	}{
		{"Dialect", throttletest.Config{Dialect: 42}, "throttletest: unknown Dialect(42)"},
		{"Algorithm", throttletest.Config{Quota: throttletest.Quota{Algorithm: 9}}, "throttletest: unknown Algorithm(9)"},
		{"Resources", throttletest.Config{Resources: map[string]throttletest.Quota{"x": {Algorithm: -1}}}, "throttletest: unknown Algorithm(-1)"},
		{"RefuseStatus", throttletest.Config{RefuseStatus: 200}, "throttletest: Config.RefuseStatus 200 is not an error status"},
		{"Secondary.Status", throttletest.Config{Secondary: throttletest.SecondaryLimit{Status: 999}}, "throttletest: Config.Secondary.Status 999 is not an error status"},
		{"Dialect after Bucket4j", throttletest.Config{Dialect: throttletest.Bucket4j + 1}, "throttletest: unknown Dialect(10)"},
		{"token quota the dialect cannot state", throttletest.Config{Tokens: []throttletest.TokenQuota{{Name: "tokens"}}}, `throttletest: token quota "tokens" in the GitHub dialect`},
		{"input tokens in OpenAI", throttletest.Config{Dialect: throttletest.OpenAI, Tokens: []throttletest.TokenQuota{{Name: "input-tokens"}}}, `throttletest: token quota "input-tokens" in the OpenAI dialect`},
		{"sliding token quota", throttletest.Config{Dialect: throttletest.Anthropic, Tokens: []throttletest.TokenQuota{{Name: "tokens", Quota: throttletest.Quota{Algorithm: throttletest.SlidingWindow}}}}, `throttletest: token quota "tokens" with SlidingWindow`},
		{"ResetRounding", throttletest.Config{ResetRounding: 4}, "throttletest: unknown Rounding(4)"},
		{"DateFormat", throttletest.Config{DateFormat: -1}, "throttletest: unknown DateFormat(-1)"},
		{"Align", throttletest.Config{Quota: throttletest.Quota{Align: 5}}, "throttletest: unknown Alignment(5)"},
		{"Burst", throttletest.Config{Quota: throttletest.Quota{Burst: 2}}, "throttletest: Quota.Burst with FixedWindow, which has no burst"},
		{"Burst of a log", throttletest.Config{Quota: throttletest.Quota{Algorithm: throttletest.SlidingLog, Burst: 2}}, "throttletest: Quota.Burst with SlidingLog, which has no burst"},
		{"Align of a log", throttletest.Config{Quota: throttletest.Quota{Algorithm: throttletest.SlidingLog, Align: throttletest.AlignClock}}, "throttletest: Quota.Align with SlidingLog, which has no windows"},
		{"RoundEstimate of a log", throttletest.Config{Quota: throttletest.Quota{Algorithm: throttletest.SlidingLog, RoundEstimate: true}}, "throttletest: Quota.RoundEstimate with SlidingLog, which has no estimate"},
		{"log token quota", throttletest.Config{Dialect: throttletest.Anthropic, Tokens: []throttletest.TokenQuota{{Name: "tokens", Quota: throttletest.Quota{Algorithm: throttletest.SlidingLog}}}}, `throttletest: token quota "tokens" with SlidingLog`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.PanicsWithValue(t, tc.want, func() { throttletest.NewHandler(tc.c) })
		})
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err, "ParseInt(%q)", s)
	return n
}
