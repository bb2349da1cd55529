package throttle

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// Regression tests for bugs a review found; each names the scenario.

// A server that sends only Retry-After, already limited when the client
// starts: the probe's 429 must hold the bucket, though the probe was sent
// before the answer freed it.
func TestColdStartProbeRefusedWithRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{MaxWait: -1})
		probe, err := b.Begin(t.Context())
		require.NoError(t, err)
		time.Sleep(20 * time.Millisecond) // the answer takes a while
		probe.DoneQuota(http.StatusTooManyRequests, Quota{Limit: -1, Remaining: -1, RetryAfter: 30 * time.Second})
		assert.False(t, b.Allow(), "held by the probe's Retry-After")
		start := time.Now()
		require.NoError(t, b.Wait(t.Context()))
		assert.Equal(t, 30*time.Second, time.Since(start))
		assert.Equal(t, uint64(1), b.Stats().Cooldowns)
	})
}

// A waiter cancelled just as the probe's failure hands it the probe: the
// bucket must not stay learning with a probe nobody sent.
func TestCancelAsProbeIsGranted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{})
		probe, err := b.Begin(t.Context())
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		ws := newWaiters()
		ws.wait(ctx, b, 0, 1)
		cancel()
		probe.Done(nil) // grants the waiter, whose context has ended
		ws.results()
		ctx2, cancel2 := context.WithTimeout(t.Context(), time.Second)
		defer cancel2()
		f, err := b.Begin(ctx2)
		require.NoError(t, err, "another caller can probe")
		f.Done(nil)
	})
}

// Rates so slow that an interval overflows, and infinite rates given as
// +Inf rather than rate.Inf.
func TestExtremeLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := NewBucket(Config{Limit: 1e-300, Burst: 1})
		assert.True(t, slow.Allow(), "a new bucket is full")
		for range 100 {
			require.False(t, slow.Allow(), "a near-zero rate admits nothing more")
		}
		inf := NewBucket(Config{Limit: rate.Limit(math.Inf(1))})
		assert.Equal(t, rate.Inf, inf.Limit())
		_, err := json.Marshal(inf.Snapshot())
		require.NoError(t, err, "an infinite limit still saves")
		inf.SetLimit(rate.Limit(math.Inf(1)))
		assert.Equal(t, rate.Inf, inf.Limit())
	})
}

// Probing a server without headers never drives the rate to zero (which
// would have made the lock-free path admit everything).
func TestProbingRateStaysPositive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{MaxWait: -1})
		require.True(t, b.Allow())
		b.ObserveQuota(http.StatusTooManyRequests, Quota{Limit: -1, Remaining: -1})
		time.Sleep(11 * time.Minute)
		require.True(t, b.Allow())
		b.ObserveQuota(http.StatusOK, Quota{Limit: -1, Remaining: -1})
		l := b.Limit()
		assert.Greater(t, float64(l), 0.0)
		assert.Less(t, float64(l), math.Inf(1))
		admitted := 0
		for range 100 {
			if b.Allow() {
				admitted++
			}
		}
		assert.Less(t, admitted, 100, "the probed rate still limits")
	})
}

// One answer with a far reset (a daily quota behind the same host) must not
// make later 429s look stale.
func TestFarResetDoesNotHideCooldown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 100, MaxWait: -1})
		b.ObserveQuota(http.StatusOK, Quota{Limit: 1000, Remaining: 500, Reset: time.Now().Add(20 * time.Hour)})
		b.ObserveQuota(http.StatusTooManyRequests, Quota{Limit: 60, Remaining: 0, RetryAfter: 30 * time.Second, Reset: time.Now().Add(30 * time.Second)})
		start := time.Now()
		require.NoError(t, b.Wait(t.Context()))
		// Retry-After, and the second by which its whole-second reset may
		// have been truncated (the Retry-After is that reset).
		assert.Equal(t, 31*time.Second, time.Since(start))
	})
}

// A wait longer than a Duration can hold must not turn the timer into a
// busy loop: synctest.Wait returns only if everything is durably blocked.
func TestHugeWaitParksQuietly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 1e-11, Burst: 1, MaxWait: -1})
		require.True(t, b.Allow())
		ctx, cancel := context.WithCancel(t.Context())
		ws := newWaiters()
		ws.wait(ctx, b, 0, 1)
		synctest.Wait()
		cancel()
		require.ErrorIs(t, ws.results()[0].err, context.Canceled)
		hour, cancelHour := context.WithTimeout(t.Context(), time.Hour)
		defer cancelHour()
		err := b.Wait(hour)
		require.ErrorIs(t, err, ErrWaitTooLong)
		assert.NotContains(t, err.Error(), "need -", "the error's figures do not overflow")
	})
}

// PaceBurst's capacity reaches the lock-free path.
func TestPaceBurstCapacityIsPublished(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 1, Pace: PaceBurst})
		q := Quota{Limit: 100, Remaining: 100, Reset: time.Now().Add(time.Minute), Window: time.Minute}
		b.ObserveQuota(http.StatusOK, q)
		time.Sleep(2 * time.Minute)
		require.Equal(t, 100, b.Burst())
		want := int(b.Tokens())
		admitted := 0
		for range 200 {
			if b.Allow() {
				admitted++
			}
		}
		assert.Equal(t, want, admitted, "Allow admits what Tokens reports")
	})
}

// A bucket restored while probing a header-less server keeps probing, so
// its rate can grow back.
func TestRestoreKeepsProbing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{MaxWait: -1})
		require.True(t, b.Allow())
		b.ObserveQuota(http.StatusOK, Quota{Limit: -1, Remaining: -1}) // no headers: free
		for range 50 {
			b.Allow()
		}
		b.ObserveQuota(http.StatusTooManyRequests, Quota{Limit: -1, Remaining: -1})
		s := b.Snapshot()
		require.Positive(t, s.ProbeMax)

		r := NewBucket(Config{MaxWait: -1})
		require.NoError(t, r.Restore(s))
		cut := r.Limit()
		for range 300 {
			time.Sleep(100 * time.Millisecond)
			if r.Allow() {
				r.ObserveQuota(http.StatusOK, Quota{Limit: -1, Remaining: -1})
			}
		}
		assert.Greater(t, r.Limit(), cut, "successes raise the restored rate")
	})
}

// An OnEvent hook may call back into the bucket.
func TestEventHookMayCallBucket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b *Bucket
		calls := 0
		b = NewBucket(Config{Limit: 1, Burst: 1, MaxWait: time.Second, OnEvent: func(Event) {
			calls++
			_ = b.Tokens()
			_ = b.Stats()
			b.SetBurst(1)
		}})
		b.ObserveQuota(http.StatusTooManyRequests, Quota{Limit: -1, Remaining: -1, RetryAfter: 5 * time.Second})
		require.ErrorIs(t, b.Wait(t.Context()), ErrWaitTooLong)
		assert.GreaterOrEqual(t, calls, 2)
	})
}

// A waiter granted its tokens just as its context ended gives them back.
// The race is not reproducible from outside, so the test drives the bucket's
// internals: grant the waiter, then cancel it.
func TestCancelAfterGrantRefunds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 1, Burst: 3})
		require.True(t, b.AllowN(3))
		ctx, cancel := context.WithCancel(t.Context())
		b.mu.Lock()
		now := b.ownLocked()
		w, _, err := b.enqueueLocked(ctx, now, 2, false)
		require.NoError(t, err)
		require.NotNil(t, w)
		b.releaseLocked(now)
		b.mu.Unlock()

		time.Sleep(2 * time.Second)
		synctest.Wait() // the timer granted the waiter
		require.True(t, w.done)
		require.NoError(t, w.err)
		assert.InDelta(t, 0, b.Tokens(), 1e-9)

		cancel()
		err = b.cancel(ctx, w)
		require.ErrorIs(t, err, context.Canceled)
		assert.InDelta(t, 2, b.Tokens(), 1e-9, "the granted tokens are returned")
	})
}
