package throttletest_test

import (
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-throttle/throttle/throttletest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResetRounding checks every whole-second (and OpenAI millisecond)
// value under each Config.ResetRounding, at a sub-second phase: the window
// ends at 10.6007s, and the refused request comes at 2.3s, 8.3007s before.
func TestResetRounding(t *testing.T) {
	cases := []struct {
		dialect               throttletest.Dialect
		header                string
		up, truncate, nearest string
		// next: NextSecond, the same as up between whole seconds (see
		// TestNextSecondOnAWholeSecond).
		next string
	}{
		{throttletest.GitHub, "X-RateLimit-Reset", "946684811", "946684810", "946684811", "946684811"},
		{throttletest.IETF, "RateLimit-Reset", "9", "8", "8", "9"},
		{throttletest.IETF, "Retry-After", "9", "8", "8", "9"},
		{throttletest.IETFStructured, "RateLimit", `"core";r=0;t=9`, `"core";r=0;t=8`, `"core";r=0;t=8`, `"core";r=0;t=9`},
		{throttletest.OpenAI, "X-Ratelimit-Reset-Requests", "8.301s", "8.3s", "8.301s", "8.301s"},
		{throttletest.RetryAfterOnly, "Retry-After", "9", "8", "8", "9"},
		{throttletest.DateReset, "X-RateLimit-Reset",
			"Sat, 01 Jan 2000 00:00:11 GMT", "Sat, 01 Jan 2000 00:00:10 GMT", "Sat, 01 Jan 2000 00:00:11 GMT", "Sat, 01 Jan 2000 00:00:11 GMT"},
		{throttletest.DateReset, "Retry-After",
			"Sat, 01 Jan 2000 00:00:11 GMT", "Sat, 01 Jan 2000 00:00:10 GMT", "Sat, 01 Jan 2000 00:00:11 GMT", "Sat, 01 Jan 2000 00:00:11 GMT"},
	}
	for _, tc := range cases {
		for _, r := range []struct {
			rounding throttletest.Rounding
			want     string
		}{{throttletest.RoundUp, tc.up}, {throttletest.Truncate, tc.truncate}, {throttletest.Nearest, tc.nearest}, {throttletest.NextSecond, tc.next}} {
			t.Run(tc.dialect.String()+"/"+tc.header+"/"+r.rounding.String(), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					h := throttletest.NewHandler(throttletest.Config{
						Quota:         throttletest.Quota{Limit: 1, Window: 10 * time.Second},
						Dialect:       tc.dialect,
						ResetRounding: r.rounding,
						Phase:         600*time.Millisecond + 700*time.Microsecond,
					})
					time.Sleep(2300 * time.Millisecond)
					resp, _ := get(t, h, "/")
					require.Equal(t, http.StatusOK, resp.StatusCode)
					resp, _ = get(t, h, "/")
					require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
					assert.Equal(t, r.want, resp.Header.Get(tc.header), "%s of the refusal", tc.header)
					assert.Equal(t, "Sat, 01 Jan 2000 00:00:02 GMT", resp.Header.Get("Date"), "Date")
				})
			})
		}
	}
}

// TestNextSecondOnAWholeSecond: Flask-Limiter's int(reset) + 1 states a
// reset that falls on a whole second a second late, where rounding up
// states it as it is.
func TestNextSecondOnAWholeSecond(t *testing.T) {
	for _, r := range []struct {
		rounding     throttletest.Rounding
		reset, retry string
	}{{throttletest.RoundUp, "946684810", "10"}, {throttletest.NextSecond, "946684811", "11"}} {
		t.Run(r.rounding.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := throttletest.NewHandler(throttletest.Config{
					Quota:         throttletest.Quota{Limit: 1, Window: 10 * time.Second},
					Dialect:       throttletest.GitHub,
					ResetRounding: r.rounding,
				})
				time.Sleep(2 * time.Second)
				resp, _ := get(t, h, "/")
				require.Equal(t, http.StatusOK, resp.StatusCode)
				assert.Equal(t, r.reset, resp.Header.Get("X-RateLimit-Reset"), "the window ends at 10 s")
				h = throttletest.NewHandler(throttletest.Config{
					Quota:         throttletest.Quota{Limit: 1, Window: 10 * time.Second},
					Dialect:       throttletest.RetryAfterOnly,
					ResetRounding: r.rounding,
				})
				get(t, h, "/")
				resp, _ = get(t, h, "/")
				require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
				assert.Equal(t, r.retry, resp.Header.Get("Retry-After"), "a whole window to its end")
			})
		})
	}
}

// TestRetryAfter checks Retry-After in seconds under each rounding, and
// Config.RetryAfterWindow. The quota is 1 per 1.5s; the refused request
// comes 1.2s into the window, 0.3s before its end.
func TestRetryAfter(t *testing.T) {
	cases := []struct {
		rounding throttletest.Rounding
		window   bool // Config.RetryAfterWindow
		alg      throttletest.Algorithm
		want     string
	}{
		// The floor of 1 is RoundUp's alone; truncating servers send 0.
		{throttletest.RoundUp, false, throttletest.FixedWindow, "1"},
		{throttletest.Truncate, false, throttletest.FixedWindow, "0"},
		{throttletest.Nearest, false, throttletest.FixedWindow, "0"},
		{throttletest.NextSecond, false, throttletest.FixedWindow, "1"},
		// httprate's int(window.Seconds()): 1.5s → 1.
		{throttletest.RoundUp, true, throttletest.FixedWindow, "2"},
		{throttletest.Truncate, true, throttletest.FixedWindow, "1"},
		{throttletest.Nearest, true, throttletest.FixedWindow, "2"},
		{throttletest.NextSecond, true, throttletest.FixedWindow, "2"},
		// A bucket's window is the time to refill Limit.
		{throttletest.Truncate, true, throttletest.TokenBucket, "1"},
	}
	for _, tc := range cases {
		name := tc.rounding.String() + "/" + tc.alg.String()
		if tc.window {
			name += "/RetryAfterWindow"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := throttletest.NewHandler(throttletest.Config{
					Quota:            throttletest.Quota{Limit: 1, Window: 1500 * time.Millisecond, Algorithm: tc.alg},
					Dialect:          throttletest.RetryAfterOnly,
					ResetRounding:    tc.rounding,
					RetryAfterWindow: tc.window,
				})
				resp, _ := get(t, h, "/")
				require.Equal(t, http.StatusOK, resp.StatusCode)
				time.Sleep(1200 * time.Millisecond)
				resp, _ = get(t, h, "/")
				require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
				assert.Equal(t, tc.want, resp.Header.Get("Retry-After"), "Retry-After")
			})
		})
	}
}

// TestRetryAfterEvery checks Config.RetryAfterEvery: every answer of the
// quota carries Retry-After to the millisecond, an admitted one the time
// until its window resets, a refused one until it admits again; the None
// dialect sends none. The quota is 2 per 3 s,
// aligned to the first request; the requests come at 0, 1.2345 s and 2.5 s.
func TestRetryAfterEvery(t *testing.T) {
	cases := []struct {
		dialect  throttletest.Dialect
		rounding throttletest.Rounding
		hostile  bool
		want     []string
	}{
		{throttletest.GitHub, throttletest.Truncate, false, []string{"3", "1.765", "0.5"}},
		{throttletest.GitHub, throttletest.RoundUp, false, []string{"3", "1.766", "0.5"}},
		{throttletest.IETF, throttletest.Truncate, false, []string{"3", "1.765", "0.5"}},
		{throttletest.None, throttletest.Truncate, false, []string{"", "", ""}},
		{throttletest.GitHub, throttletest.Truncate, true, []string{"999999999", "999999999", "999999999"}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%v/%v/hostile=%v", tc.dialect, tc.rounding, tc.hostile), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := throttletest.NewHandler(throttletest.Config{
					Quota:           throttletest.Quota{Limit: 2, Window: 3 * time.Second, Align: throttletest.AlignFirstRequest},
					Dialect:         tc.dialect,
					ResetRounding:   tc.rounding,
					RetryAfterEvery: true,
					Hostile:         tc.hostile,
				})
				time.Sleep(time.Second) // the window opens at the first request, not at the start
				var got []string
				for i, sleep := range []time.Duration{0, 1234500 * time.Microsecond, 1265500 * time.Microsecond} {
					time.Sleep(sleep)
					resp, _ := get(t, h, "/")
					want := http.StatusOK
					if i == 2 {
						want = http.StatusTooManyRequests
					}
					require.Equal(t, want, resp.StatusCode, "request %d", i)
					got = append(got, resp.Header.Get("Retry-After"))
				}
				assert.Equal(t, tc.want, got)
			})
		})
	}
}

// TestRetryAfterOptionsLeaveShedAlone checks that RetryAfterWindow and
// RetryAfterEvery leave the Retry-After of shed requests alone.
func TestRetryAfterOptionsLeaveShedAlone(t *testing.T) {
	for _, c := range []throttletest.Config{{RetryAfterWindow: true}, {RetryAfterEvery: true}} {
		t.Run(fmt.Sprintf("window=%v/every=%v", c.RetryAfterWindow, c.RetryAfterEvery), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c.Quota, c.Dialect = throttletest.Quota{Window: time.Minute}, throttletest.IETF
				c.ShedEvery, c.ShedRetryAfter = 1, 3*time.Second
				resp, _ := get(t, throttletest.NewHandler(c), "/")
				require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
				assert.Equal(t, "3", resp.Header.Get("Retry-After"))
			})
		})
	}
}

// TestDateReset checks the DateReset dialect's dates in every DateFormat:
// the quota is 2 per minute, the requests come at 10.5s.
func TestDateReset(t *testing.T) {
	const date = "Sat, 01 Jan 2000 00:00:10 GMT"
	cases := []struct {
		format   throttletest.DateFormat
		skew     time.Duration
		rounding throttletest.Rounding
		reset    string // X-RateLimit-Reset and the refusal's Retry-After
		resetAt  int64  // the Unix time it parses to
	}{
		{format: throttletest.IMFFixdate, reset: "Sat, 01 Jan 2000 00:01:00 GMT", resetAt: bubbleUnix + 60},
		{format: throttletest.RFC1123UTC, reset: "Sat, 01 Jan 2000 00:01:00 UTC", resetAt: bubbleUnix + 60},
		{format: throttletest.RFC1123Z, reset: "Sat, 01 Jan 2000 00:01:00 +0000", resetAt: bubbleUnix + 60},
		// The server's clock is 1.5s ahead, and it truncates.
		{format: throttletest.RFC1123Z, skew: 1500 * time.Millisecond, rounding: throttletest.Truncate,
			reset: "Sat, 01 Jan 2000 00:01:01 +0000", resetAt: bubbleUnix + 61},
	}
	for _, tc := range cases {
		t.Run(tc.format.String()+"/"+tc.skew.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := throttletest.NewHandler(throttletest.Config{
					Quota:         throttletest.Quota{Limit: 2, Window: time.Minute},
					Dialect:       throttletest.DateReset,
					DateFormat:    tc.format,
					DateSkew:      tc.skew,
					ResetRounding: tc.rounding,
				})
				time.Sleep(10500 * time.Millisecond)
				want := map[string]string{
					"date":                  date,
					"x-ratelimit-limit":     "2",
					"x-ratelimit-remaining": "1",
					"x-ratelimit-reset":     tc.reset,
				}
				if tc.skew != 0 {
					want["date"] = "Sat, 01 Jan 2000 00:00:12 GMT"
				}
				resp, _ := get(t, h, "/")
				require.Equal(t, http.StatusOK, resp.StatusCode)
				assert.Equal(t, want, headers(resp), "admitted headers")

				get(t, h, "/")
				resp, _ = get(t, h, "/")
				require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
				want["x-ratelimit-remaining"], want["retry-after"] = "0", tc.reset
				assert.Equal(t, want, headers(resp), "refused headers")

				layout := map[throttletest.DateFormat]string{
					throttletest.IMFFixdate: http.TimeFormat,
					throttletest.RFC1123UTC: time.RFC1123,
					throttletest.RFC1123Z:   time.RFC1123Z,
				}[tc.format]
				for _, name := range []string{"X-RateLimit-Reset", "Retry-After"} {
					got, err := time.Parse(layout, resp.Header.Get(name))
					require.NoError(t, err, "time.Parse(%q, %s)", layout, name)
					assert.Equal(t, tc.resetAt, got.Unix(), "%s as Unix seconds", name)

					// Only IMF-fixdate is an HTTP date.
					_, err = http.ParseTime(resp.Header.Get(name))
					assert.Equal(t, tc.format == throttletest.IMFFixdate, err == nil,
						"http.ParseTime(%q) error = %v", resp.Header.Get(name), err)
				}
			})
		})
	}
}
