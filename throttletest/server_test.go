package throttletest_test

import (
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-throttle/throttle/throttletest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServer drives a loopback server with a real client. Wall-clock timing
// is not asserted: only what holds whatever the scheduling.
func TestServer(t *testing.T) {
	cases := []struct {
		name    string
		dialect throttletest.Dialect
		header  string // a quota header every response carries
	}{
		{"GitHub", throttletest.GitHub, "X-RateLimit-Limit"},
		{"IETF", throttletest.IETF, "RateLimit-Limit"},
		{"OpenAI", throttletest.OpenAI, "X-Ratelimit-Limit-Requests"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := throttletest.NewTestServer(t, throttletest.Config{
				Quota:   throttletest.Quota{Limit: 5, Window: time.Hour},
				Dialect: tc.dialect,
			})
			client := s.Client()

			const n = 20
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				statuses = map[int]int{}
				limits   = map[string]int{}
			)
			for range n {
				wg.Go(func() {
					resp, err := client.Get(s.URL + "/repos")
					if !assert.NoError(t, err) {
						return
					}
					defer resp.Body.Close()
					io.Copy(io.Discard, resp.Body) //nolint:errcheck // loopback
					mu.Lock()
					defer mu.Unlock()
					statuses[resp.StatusCode]++
					limits[resp.Header.Get(tc.header)]++
					assert.NotEmpty(t, resp.Header.Get("Date"))
				})
			}
			wg.Wait()

			// One window of an hour: exactly Limit admitted, unless the test
			// runs for an hour.
			assert.Equal(t, map[int]int{http.StatusOK: 5, http.StatusTooManyRequests: n - 5}, statuses)
			assert.Equal(t, map[string]int{"5": n}, limits)
			stats := s.Stats()
			assert.Equal(t, throttletest.Counts{Admitted: 5, Refused: n - 5}, stats.Counts)
			assert.Equal(t, stats.Counts, stats.Resources[throttletest.DefaultResource])
		})
	}
}

func TestNewServer(t *testing.T) {
	s := throttletest.NewServer(throttletest.Config{Dialect: throttletest.RetryAfterOnly, Quota: throttletest.Quota{Limit: 1, Window: time.Hour}})
	resp, err := s.Client().Get(s.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	resp, err = s.Client().Get(s.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	retry, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	require.NoError(t, err)
	assert.InDelta(t, 3600, retry, 60, "Retry-After")
	s.Close()
}
