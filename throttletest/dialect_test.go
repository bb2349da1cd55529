package throttletest_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-throttle/throttle/throttletest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
			dialect: throttletest.Anthropic,
			admitted: map[string]string{
				"date": date, "anthropic-ratelimit-requests-limit": "2", "anthropic-ratelimit-requests-remaining": "1",
				"anthropic-ratelimit-requests-reset": "2000-01-01T00:01:00Z",
			},
			refused: map[string]string{
				"date": date, "anthropic-ratelimit-requests-limit": "2", "anthropic-ratelimit-requests-remaining": "0",
				"anthropic-ratelimit-requests-reset": "2000-01-01T00:01:00Z", "retry-after": "50",
			},
			refusedBody: "rate limit exceeded\n",
		},
		{
			dialect:  throttletest.Bucket4j,
			admitted: map[string]string{"date": date, "x-rate-limit-remaining": "1"},
			refused: map[string]string{
				"date": date, "x-rate-limit-remaining": "0", "x-rate-limit-retry-after-seconds": "50",
			},
			refusedBody: "rate limit exceeded\n",
		},
		{
			dialect: throttletest.Spring,
			admitted: map[string]string{
				"date": date, "x-ratelimit-remaining": "1", "x-ratelimit-replenish-rate": "0.03333333333333333",
				"x-ratelimit-burst-capacity": "2", "x-ratelimit-requested-tokens": "1",
			},
			refused: map[string]string{
				"date": date, "x-ratelimit-remaining": "0", "x-ratelimit-replenish-rate": "0.03333333333333333",
				"x-ratelimit-burst-capacity": "2", "x-ratelimit-requested-tokens": "1",
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
		{throttletest.Anthropic, map[string]string{
			"date": date, "anthropic-ratelimit-requests-limit": "18446744073709551616",
			"anthropic-ratelimit-requests-remaining": "-1", "anthropic-ratelimit-requests-reset": "9999-12-31T23:59:59Z",
			"retry-after": "999999999",
		}},
		{throttletest.Spring, map[string]string{
			"date": date, "x-ratelimit-remaining": "-1", "x-ratelimit-replenish-rate": "18446744073709551616",
			"x-ratelimit-burst-capacity": "18446744073709551616", "x-ratelimit-requested-tokens": "1",
		}},
		{throttletest.Bucket4j, map[string]string{
			"date": date, "x-rate-limit-remaining": "-1", "x-rate-limit-retry-after-seconds": "999999999",
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
