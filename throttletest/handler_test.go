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

func TestDialects(t *testing.T) {
	// Limit 2 per minute; the requests are sent 10.5s into the first
	// window, 49.5s before its reset.
	const date = "Sat, 01 Jan 2000 00:00:10 GMT"
	githubBody := `{"message":"API rate limit exceeded for resource core.",` +
		`"documentation_url":"https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-primary-rate-limits"}`
	cases := []struct {
		dialect       throttletest.Dialect
		admitted      map[string]string // headers of the first request (remaining 1)
		refused       map[string]string // headers of the third request
		refusedBody   string
		refusedStatus int
	}{
		{
			dialect: throttletest.GitHub,
			admitted: map[string]string{
				"date": date, "x-ratelimit-limit": "2", "x-ratelimit-remaining": "1",
				"x-ratelimit-used": "1", "x-ratelimit-reset": "946684860", "x-ratelimit-resource": "core",
			},
			refused: map[string]string{
				"date": date, "x-ratelimit-limit": "2", "x-ratelimit-remaining": "0",
				"x-ratelimit-used": "2", "x-ratelimit-reset": "946684860", "x-ratelimit-resource": "core",
			},
			refusedBody: githubBody,
		},
		{
			dialect: throttletest.IETF,
			admitted: map[string]string{
				"date": date, "ratelimit-limit": "2", "ratelimit-remaining": "1",
				"ratelimit-reset": "50", "ratelimit-policy": "2;w=60",
			},
			refused: map[string]string{
				"date": date, "ratelimit-limit": "2", "ratelimit-remaining": "0",
				"ratelimit-reset": "50", "ratelimit-policy": "2;w=60", "retry-after": "50",
			},
			refusedBody: "rate limit exceeded\n",
		},
		{
			dialect: throttletest.IETFStructured,
			admitted: map[string]string{
				"date": date, "ratelimit-policy": `"core";q=2;w=60`, "ratelimit": `"core";r=1;t=50`,
			},
			refused: map[string]string{
				"date": date, "ratelimit-policy": `"core";q=2;w=60`, "ratelimit": `"core";r=0;t=50`,
				"retry-after": "50",
			},
			refusedBody: "rate limit exceeded\n",
		},
		{
			dialect: throttletest.OpenAI,
			admitted: map[string]string{
				"date": date, "x-ratelimit-limit-requests": "2", "x-ratelimit-remaining-requests": "1",
				"x-ratelimit-reset-requests": "49.5s",
			},
			refused: map[string]string{
				"date": date, "x-ratelimit-limit-requests": "2", "x-ratelimit-remaining-requests": "0",
				"x-ratelimit-reset-requests": "49.5s",
			},
			refusedBody: "rate limit exceeded\n",
		},
		{
			dialect:     throttletest.RetryAfterOnly,
			admitted:    map[string]string{"date": date},
			refused:     map[string]string{"date": date, "retry-after": "50"},
			refusedBody: "rate limit exceeded\n",
		},
		{
			dialect:     throttletest.None,
			admitted:    map[string]string{"date": date},
			refused:     map[string]string{"date": date},
			refusedBody: "rate limit exceeded\n",
		},
		{
			dialect: throttletest.DateReset,
			admitted: map[string]string{
				"date": date, "x-ratelimit-limit": "2", "x-ratelimit-remaining": "1",
				"x-ratelimit-reset": "Sat, 01 Jan 2000 00:01:00 GMT",
			},
			refused: map[string]string{
				"date": date, "x-ratelimit-limit": "2", "x-ratelimit-remaining": "0",
				"x-ratelimit-reset": "Sat, 01 Jan 2000 00:01:00 GMT", "retry-after": "Sat, 01 Jan 2000 00:01:00 GMT",
			},
			refusedBody: "rate limit exceeded\n",
		},
		{
			dialect: throttletest.GitHub,
			admitted: map[string]string{
				"date": date, "x-ratelimit-limit": "2", "x-ratelimit-remaining": "1",
				"x-ratelimit-used": "1", "x-ratelimit-reset": "946684860", "x-ratelimit-resource": "core",
			},
			refused: map[string]string{
				"date": date, "x-ratelimit-limit": "2", "x-ratelimit-remaining": "0",
				"x-ratelimit-used": "2", "x-ratelimit-reset": "946684860", "x-ratelimit-resource": "core",
			},
			refusedBody:   githubBody,
			refusedStatus: http.StatusForbidden,
		},
	}
	for _, tc := range cases {
		name := tc.dialect.String()
		if tc.refusedStatus != 0 {
			name += "/RefuseStatus"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := throttletest.NewHandler(throttletest.Config{
					Quota:        throttletest.Quota{Limit: 2, Window: time.Minute},
					Dialect:      tc.dialect,
					RefuseStatus: tc.refusedStatus,
				})
				time.Sleep(10500 * time.Millisecond)
				resp, body := get(t, h, "/")
				require.Equal(t, http.StatusOK, resp.StatusCode)
				assert.Equal(t, tc.admitted, headers(resp), "admitted headers")
				assert.JSONEq(t, `{"ok":true,"resource":"core"}`, body)

				resp, _ = get(t, h, "/")
				require.Equal(t, http.StatusOK, resp.StatusCode)

				resp, body = get(t, h, "/")
				wantStatus := http.StatusTooManyRequests
				if tc.refusedStatus != 0 {
					wantStatus = tc.refusedStatus
				}
				require.Equal(t, wantStatus, resp.StatusCode)
				assert.Equal(t, tc.refused, headers(resp), "refused headers")
				assert.Equal(t, tc.refusedBody, body, "refused body")
			})
		})
	}
}

func TestDateSkew(t *testing.T) {
	cases := []struct {
		skew  time.Duration
		date  string
		reset int64 // X-RateLimit-Reset; the window ends 60s after the start
	}{
		{0, "Sat, 01 Jan 2000 00:00:00 GMT", bubbleUnix + 60},
		{-90 * time.Second, "Fri, 31 Dec 1999 23:58:30 GMT", bubbleUnix - 30},
		{time.Hour, "Sat, 01 Jan 2000 01:00:00 GMT", bubbleUnix + 3660},
		// Date is truncated to the second, the reset rounded up: a client
		// anchoring on Date waits a little longer than needed, never less.
		{1500 * time.Millisecond, "Sat, 01 Jan 2000 00:00:01 GMT", bubbleUnix + 62},
	}
	for _, tc := range cases {
		t.Run(tc.skew.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := throttletest.NewHandler(throttletest.Config{
					Quota:    throttletest.Quota{Limit: 1, Window: time.Minute},
					DateSkew: tc.skew,
				})
				for _, status := range []int{http.StatusOK, http.StatusTooManyRequests} {
					resp, _ := get(t, h, "/")
					require.Equal(t, status, resp.StatusCode)
					assert.Equal(t, tc.date, resp.Header.Get("Date"), "Date")
					assert.Equal(t, tc.reset, mustInt(t, resp.Header.Get("X-RateLimit-Reset")), "X-RateLimit-Reset")

					date, err := http.ParseTime(resp.Header.Get("Date"))
					require.NoError(t, err)
					untilReset := time.Unix(tc.reset, 0).Sub(date)
					assert.GreaterOrEqual(t, untilReset, time.Minute, "reset − Date")
					assert.Less(t, untilReset, time.Minute+2*time.Second, "reset − Date")
				}
			})
		})
	}
}

func TestHostile(t *testing.T) {
	const date = "Sat, 01 Jan 2000 00:00:00 GMT"
	cases := []struct {
		dialect throttletest.Dialect
		refused map[string]string
	}{
		{throttletest.GitHub, map[string]string{
			"date": date, "x-ratelimit-limit": "18446744073709551616", "x-ratelimit-remaining": "-1",
			"x-ratelimit-used": "NaN", "x-ratelimit-reset": "99999999999", "x-ratelimit-resource": "core",
		}},
		{throttletest.IETF, map[string]string{
			"date": date, "ratelimit-limit": "18446744073709551616", "ratelimit-remaining": "-1",
			"ratelimit-reset": "999999999", "ratelimit-policy": "18446744073709551616;w=0",
			"retry-after": "999999999",
		}},
		{throttletest.IETFStructured, map[string]string{
			"date":             date,
			"ratelimit-policy": `"core";q=18446744073709551616;w=0`,
			"ratelimit":        `"core";r=-1;t=999999999`,
			"retry-after":      "999999999",
		}},
		{throttletest.OpenAI, map[string]string{
			"date": date, "x-ratelimit-limit-requests": "18446744073709551616",
			"x-ratelimit-remaining-requests": "-1", "x-ratelimit-reset-requests": "2562047h47m16.854775807s",
		}},
		{throttletest.RetryAfterOnly, map[string]string{"date": date, "retry-after": "999999999"}},
		{throttletest.None, map[string]string{"date": date}},
		{throttletest.DateReset, map[string]string{
			"date": date, "x-ratelimit-limit": "18446744073709551616", "x-ratelimit-remaining": "-1",
			"x-ratelimit-reset": "Fri, 31 Dec 9999 23:59:59 +0000", "retry-after": "Fri, 31 Dec 9999 23:59:59 +0000",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.dialect.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := throttletest.NewHandler(throttletest.Config{
					Quota:      throttletest.Quota{Limit: 1, Window: time.Second},
					Dialect:    tc.dialect,
					Hostile:    true,
					DateFormat: throttletest.RFC1123Z, // DateReset's only
				})
				resp, _ := get(t, h, "/")
				require.Equal(t, http.StatusOK, resp.StatusCode)
				resp, _ = get(t, h, "/")
				require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
				assert.Equal(t, tc.refused, headers(resp), "refused headers")

				// The real quota, not the advertised one, is enforced.
				time.Sleep(time.Second)
				resp, _ = get(t, h, "/")
				require.Equal(t, http.StatusOK, resp.StatusCode)
				assert.Equal(t, throttletest.Counts{Admitted: 2, Refused: 1}, h.Stats().Counts)
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
		{"Dialect after DateReset", throttletest.Config{Dialect: throttletest.DateReset + 1}, "throttletest: unknown Dialect(7)"},
		{"ResetRounding", throttletest.Config{ResetRounding: 3}, "throttletest: unknown Rounding(3)"},
		{"DateFormat", throttletest.Config{DateFormat: -1}, "throttletest: unknown DateFormat(-1)"},
		{"Align", throttletest.Config{Quota: throttletest.Quota{Align: 5}}, "throttletest: unknown Alignment(5)"},
		{"Burst", throttletest.Config{Quota: throttletest.Quota{Burst: 2}}, "throttletest: Quota.Burst with FixedWindow, which has no burst"},
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
