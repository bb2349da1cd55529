package throttle

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// quota builds a Quota; negative counts mean not stated.
func quota(limit, remaining float64, reset time.Duration) Quota {
	q := Quota{Limit: limit, Remaining: remaining}
	if reset > 0 {
		q.Reset = time.Now().Add(reset)
	}
	return q
}

func TestColdStartProbesOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{}) // learn everything from the server
		probe, err := b.Begin(t.Context())
		require.NoError(t, err, "the first request goes out at once")
		assert.False(t, b.Allow(), "others wait for the probe's answer")

		ws := newWaiters()
		for i := range 4 {
			ws.wait(t.Context(), b, i, 1)
		}
		time.Sleep(time.Second)
		// 10 per 10 s, 9 left: until the server shows it is a fixed
		// window, 95% of its steady rate.
		q := quota(10, 9, 10*time.Second)
		q.Window = 10 * time.Second
		probe.DoneQuota(http.StatusOK, q)
		got := ws.results()
		for i := range 4 {
			require.NoError(t, got[i].err)
		}
		assert.Less(t, got[0].at, got[3].at, "released at the learned pace, not all at once")
		assert.LessOrEqual(t, got[3].at, 5*time.Second)
		assert.InDelta(t, 0.95, float64(b.Limit()), 1e-9, "learned rate: 95% of the steady rate")
	})
}

func TestColdStartWithoutHeadersSlowStarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{})
		start := time.Now()
		probe, err := b.Begin(t.Context())
		require.NoError(t, err)
		ws := newWaiters()
		ws.wait(t.Context(), b, 0, 1)
		probe.DoneQuota(http.StatusOK, quota(-1, -1, 0))
		assert.Equal(t, result{0, 0, nil}, ws.results()[0], "released as soon as the answer says nothing")
		// One at a time, each after the last one's answer, until the server
		// has answered discoverAnswers of them without refusing one.
		f, err := b.Begin(t.Context())
		require.NoError(t, err)
		assert.False(t, b.Allow(), "the next waits for this one's answer")
		time.Sleep(10 * time.Millisecond)
		f.DoneQuota(http.StatusOK, quota(-1, -1, 0))
		for range discoverAnswers - 2 {
			f, err := b.Begin(t.Context())
			require.NoError(t, err)
			time.Sleep(10 * time.Millisecond)
			f.DoneQuota(http.StatusOK, quota(-1, -1, 0))
		}
		// No limit found, but one at a time is no proof that the server
		// serves more at once (nginx's limit_req without nodelay delays
		// the excess to its rate): the rate starts at what was served and
		// doubles every half second of successes, until a 429.
		served := float64(discoverAnswers) / time.Since(start).Seconds()
		assert.InDelta(t, served, float64(b.Limit()), 1e-6, "the rate starts at what was served")
		assert.True(t, b.Allow())
		assert.True(t, b.Allow())
		assert.False(t, b.Allow(), "a small burst: the pace, not a burst, finds the limit")
		for range 10 {
			time.Sleep(500 * time.Millisecond)
			f, err := b.Begin(t.Context())
			require.NoError(t, err)
			f.DoneQuota(http.StatusOK, quota(-1, -1, 0))
		}
		assert.InDelta(t, served*1024, float64(b.Limit()), served, "doubled ten times in 5 s")
	})
}

func TestColdStartProbeFailureLetsAnotherProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{})
		probe, err := b.Begin(t.Context())
		require.NoError(t, err)
		ws := newWaiters()
		ws.wait(t.Context(), b, 0, 1)
		probe.Done(nil) // transport error: no answer
		assert.Equal(t, result{0, 0, nil}, ws.results()[0], "the next caller probes")
	})
}

func TestRemainingLowersTokensMinusInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 1, Burst: 10})
		var flights []Flight
		for range 3 {
			f, err := b.Begin(t.Context())
			require.NoError(t, err)
			flights = append(flights, f)
		}
		require.InDelta(t, 7, b.Tokens(), 1e-9)
		// The server has 5 left; two of ours are still on their way to it.
		flights[0].DoneQuota(http.StatusOK, quota(-1, 5, 0))
		assert.InDelta(t, 3, b.Tokens(), 1e-9, "tokens = remaining - in flight")
		flights[1].DoneQuota(http.StatusOK, quota(-1, 9, 0))
		assert.InDelta(t, 3, b.Tokens(), 1e-9, "without a newer window, never raised")
		flights[2].Done(nil)
	})
}

func TestStaleWindowNeverRaises(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 100, Burst: 100})
		b.ObserveQuota(http.StatusOK, quota(100, 10, 10*time.Second))
		require.InDelta(t, 10, b.Tokens(), 1e-6)

		time.Sleep(11 * time.Second) // the server's window has moved on
		b.ObserveQuota(http.StatusOK, quota(100, 40, 10*time.Second))
		assert.InDelta(t, 40, b.Tokens(), 1e-6, "a newer window raises the tokens")

		// A late answer from the old window, claiming more left.
		old := Quota{Limit: 100, Remaining: 90, Reset: time.Now().Add(-time.Second)}
		b.ObserveQuota(http.StatusOK, old)
		assert.InDelta(t, 40, b.Tokens(), 1e-6, "an older window never raises")
		// A late answer from the old window, claiming less left, is ignored too.
		old.Remaining = 0
		b.ObserveQuota(http.StatusOK, old)
		assert.InDelta(t, 40, b.Tokens(), 1e-6, "an older window says nothing about this one")
	})
}

func TestConfiguredLimitIsACeiling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 5})
		q := quota(1000, 999, time.Minute)
		q.Window = time.Minute
		b.ObserveQuota(http.StatusOK, q)
		assert.Equal(t, rate.Limit(5), b.Limit(), "the server cannot raise a configured limit")
		q = quota(60, 50, time.Minute) // the quota is 1/s after all
		q.Window = time.Minute
		b.ObserveQuota(http.StatusOK, q)
		assert.Less(t, float64(b.Limit()), 5.0, "but it can lower it")
	})
}

func TestSpentQuotaHoldsUntilReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 10})
		b.ObserveQuota(http.StatusOK, quota(100, 0, 7*time.Second))
		start := time.Now()
		require.NoError(t, b.Wait(t.Context()))
		// A whole-second reset may be truncated: until the server has shown
		// that it is a fixed window, nothing goes before its latest end.
		assert.Equal(t, 8*time.Second, time.Since(start), "held until the reset's latest end, not longer")
	})
}

func TestCooldown(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		q       Quota
		resetIn time.Duration // 0: no reset
		want    time.Duration // 0: no cooldown
	}{
		{"429 Retry-After", 429, Quota{Limit: -1, Remaining: -1, RetryAfter: 5 * time.Second}, 0, 5 * time.Second},
		{"429 Retry-After beats reset", 429, Quota{Limit: 10, Remaining: 0, RetryAfter: 3 * time.Second}, 8 * time.Second, 3 * time.Second},
		// A whole-second reset is held to its latest end, a second on:
		// the server is not known to be a fixed window whose resets are on
		// time (it may truncate them).
		{"429 reset", 429, Quota{Limit: 10, Remaining: 0}, 8 * time.Second, 9 * time.Second},
		{"503 Retry-After", 503, Quota{Limit: -1, Remaining: -1, RetryAfter: 2 * time.Second}, 0, 2 * time.Second},
		{"503 alone", 503, Quota{Limit: -1, Remaining: -1}, 0, 0},
		{"GitHub 403 remaining 0", 403, Quota{Limit: 60, Remaining: 0}, 30 * time.Second, 31 * time.Second},
		{"GitHub 403 secondary", 403, Quota{Limit: 60, Remaining: 50, RetryAfter: 60 * time.Second}, 0, 60 * time.Second},
		{"403 forbidden", 403, Quota{Limit: -1, Remaining: -1}, 0, 0},
		{"hostile Retry-After capped", 429, Quota{Limit: -1, Remaining: -1, RetryAfter: 999999999 * time.Second}, 0, DefaultMaxCooldown},
		{"hostile reset capped", 429, Quota{Limit: 10, Remaining: 0}, 50 * 365 * 24 * time.Hour, DefaultMaxCooldown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := NewBucket(Config{Limit: rate.Inf, MaxWait: -1})
				q := tt.q
				if tt.resetIn > 0 {
					q.Reset = time.Now().Add(tt.resetIn)
				}
				b.ObserveQuota(tt.status, q)
				start := time.Now()
				require.NoError(t, b.Wait(t.Context()))
				assert.Equal(t, tt.want, time.Since(start), "ObserveQuota(%d, %+v): wait", tt.status, tt.q)
			})
		})
	}
}

func TestCooldownReplansQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 1, Burst: 1, MaxWait: 4 * time.Second})
		require.True(t, b.Allow())
		ws := newWaiters()
		ws.wait(t.Context(), b, 0, 1) // planned at 1s
		short, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		ws.wait(short, b, 1, 1) // planned at 2s, deadline 2s

		b.ObserveQuota(http.StatusTooManyRequests, Quota{Limit: -1, Remaining: -1, RetryAfter: 3 * time.Second})
		synctest.Wait()
		got := ws.results()
		assert.Equal(t, result{0, 3 * time.Second, nil}, got[0], "served when the cooldown ends")
		require.ErrorIs(t, got[1].err, ErrWaitTooLong)
		require.ErrorIs(t, got[1].err, context.DeadlineExceeded)
		assert.Equal(t, time.Duration(0), got[1].at, "a waiter that can no longer make it fails at once")
		assert.False(t, b.Allow(), "one token at the end of the cooldown, taken")
	})
}

func TestBackoffWithoutHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 10, MaxWait: -1})
		var waits []time.Duration
		for range 4 {
			f, err := b.Begin(t.Context())
			require.NoError(t, err)
			start := time.Now()
			f.DoneQuota(http.StatusTooManyRequests, Quota{Limit: -1, Remaining: -1})
			require.NoError(t, b.Wait(t.Context()))
			waits = append(waits, time.Since(start))
		}
		for i := 1; i < len(waits); i++ {
			assert.Greater(t, waits[i], waits[i-1], "backoff grows: %v", waits)
		}
		assert.Less(t, float64(b.Limit()), 10.0, "429s without headers cut the rate")
		assert.Less(t, waits[3], DefaultMaxCooldown)
	})
}

func TestObserveNilAndFlightZero(t *testing.T) {
	b := NewBucket(Config{Limit: 1})
	b.Observe(nil)
	Flight{}.Done(nil) // a zero Flight is inert
	assert.True(t, b.Allow())
}

func TestObserveResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 100, Burst: 100})
		h := http.Header{}
		h.Set("RateLimit-Limit", "100")
		h.Set("RateLimit-Remaining", "7")
		h.Set("RateLimit-Reset", "30")
		b.Observe(&http.Response{StatusCode: 200, Header: h})
		assert.InDelta(t, 7, b.Tokens(), 1e-6)
	})
}

func TestColdStartHonoursMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{MaxWait: 2 * time.Second})
		probe, err := b.Begin(t.Context())
		require.NoError(t, err)
		ws := newWaiters()
		ws.wait(t.Context(), b, 0, 1)
		time.Sleep(5 * time.Second) // the probe's answer is slow
		got := ws.results()[0]
		require.ErrorIs(t, got.err, ErrWaitTooLong)
		assert.Equal(t, 2*time.Second, got.at, "refused at MaxWait, not when the answer comes")
		probe.Done(nil)
	})
}

// A reset stated as a delta is anchored to the arrival as read, which may be
// behind the bucket's clock by the time the answer takes the lock (another
// caller read the clock later and got there first). It is whole seconds
// from that reading, not from the clock: taken as exact, 3 s told 300 ms
// apart moved the reset on by 300 ms, and a fixed window was taken for GCRA.
func TestObserveDeltaResetReadBeforeTheLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{})
		time.Sleep(250 * time.Millisecond) // resets off the wall clock's whole second
		first, err := b.Begin(t.Context())
		require.NoError(t, err)
		time.Sleep(time.Millisecond)
		first.DoneQuota(http.StatusOK, quota(30, 29, 3*time.Second))

		time.Sleep(300 * time.Millisecond)
		f, err := b.Begin(t.Context())
		require.NoError(t, err)
		time.Sleep(10 * time.Millisecond)
		read := b.now()
		q := quota(30, 28, 3*time.Second) // the same window: 3 s, rounded, from the reading
		time.Sleep(5 * time.Millisecond)
		b.Tokens() // another caller reads the clock later and takes the lock first
		f.doneAt(http.StatusOK, q, read)

		assert.False(t, b.model.bucket, "a fixed window's whole-second resets are no bucket's")
		assert.False(t, b.model.fullAt)
		assert.Equal(t, kindUnknown, b.model.kind)
	})
}

// A caller of DoneQuota parses the answer at a reading of its own, before
// the bucket reads its clock: a delta reset of whole seconds from the one
// is a few microseconds off them from the other, and still a whole-second
// reset.
func TestDoneQuotaParsedBeforeTheBucketsReading(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{})
		time.Sleep(250 * time.Millisecond) // resets off the wall clock's whole second
		for i, left := range []float64{29, 28} {
			f, err := b.Begin(t.Context())
			require.NoError(t, err)
			time.Sleep(10 * time.Millisecond)
			q := quota(30, left, 3*time.Second) // parsed by the caller
			time.Sleep(200 * time.Microsecond)
			f.DoneQuota(http.StatusOK, q)
			if i == 0 {
				time.Sleep(300 * time.Millisecond)
			}
		}
		assert.False(t, b.model.bucket, "a fixed window's whole-second resets are no bucket's")
		assert.Equal(t, kindUnknown, b.model.kind)
	})
}
