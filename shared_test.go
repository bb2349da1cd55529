package throttle

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// memStore is a MemoryStore that counts its calls, and fails every one
// while fail is set, as an unreachable store.
type memStore struct {
	MemoryStore
	calls atomic.Int64
	fail  atomic.Bool
}

func newMemStore() *memStore { return &memStore{} }

var errDown = errors.New("memstore: down")

func (m *memStore) Take(ctx context.Context, key string, n int, limit rate.Limit, burst int) (time.Duration, error) {
	m.calls.Add(1)
	if m.fail.Load() {
		return 0, errDown
	}
	return m.MemoryStore.Take(ctx, key, n, limit, burst)
}

func (m *memStore) Correct(ctx context.Context, key string, c Correction) error {
	m.calls.Add(1)
	if m.fail.Load() {
		return errDown
	}
	return m.MemoryStore.Correct(ctx, key, c)
}

func TestSharedBucketsShareOneQuota(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newMemStore()
		cfg := Config{Limit: 10, Burst: 5, Name: "api", Store: store}
		a, b := NewBucket(cfg), NewBucket(cfg)
		var admitted atomic.Int64
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		for _, bk := range []*Bucket{a, b, a, b} {
			wg.Go(func() {
				for bk.Wait(ctx) == nil {
					admitted.Add(1)
				}
			})
		}
		wg.Wait()
		// Two processes, one quota: burst 5 + 10/s for 10 s.
		assert.LessOrEqual(t, admitted.Load(), int64(105))
		assert.GreaterOrEqual(t, admitted.Load(), int64(100))
		assert.False(t, a.Allow() && b.Allow() && a.Allow(), "the shared bucket is spent")
	})
}

func TestSharedCooldownHoldsEveryProcess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newMemStore()
		cfg := Config{Limit: 100, Name: "api", Store: store, MaxWait: -1}
		a, b := NewBucket(cfg), NewBucket(cfg)
		a.ObserveQuota(http.StatusTooManyRequests, Quota{Limit: -1, Remaining: -1, RetryAfter: 5 * time.Second})
		start := time.Now()
		require.NoError(t, b.Wait(t.Context()))
		assert.Equal(t, 5*time.Second, time.Since(start), "a 429 seen by one process holds the other")
	})
}

func TestSharedCorrectionReachesOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newMemStore()
		cfg := Config{Limit: 1, Burst: 10, Name: "api", Store: store}
		a, b := NewBucket(cfg), NewBucket(cfg)
		a.ObserveQuota(http.StatusOK, Quota{Limit: -1, Remaining: 2})
		assert.True(t, b.Allow())
		assert.True(t, b.Allow())
		assert.False(t, b.Allow(), "the server said 2 left, through a's answer")
	})
}

// One process told nothing is left until a reset holds every process
// (Correction.Spent), until an answer to a request sent since tells
// another that the server gives again: a sliding window's reset, stated as
// a whole window, is not when it gives back. As a refusal's hold, which
// never shortens, it held them all to the reset. A store held does not
// refill: the tokens come back at the rate from the hold's end.
func TestSharedSpentHoldEndsOnNewerAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newMemStore()
		cfg := Config{Limit: 10, Burst: 10, Name: "api", Store: store}
		a, b, c := NewBucket(cfg), NewBucket(cfg), NewBucket(cfg)
		for _, bk := range []*Bucket{a, b, c} {
			require.True(t, bk.Allow())
		}
		a.ObserveQuota(http.StatusOK, Quota{Limit: 30, Remaining: 0, Reset: time.Now().Add(3 * time.Second)})
		assert.False(t, c.Allow(), "nothing left until the reset, said a's answer")
		time.Sleep(500 * time.Millisecond)
		assert.False(t, c.Allow(), "still held")
		b.ObserveQuota(http.StatusOK, Quota{Limit: 30, Remaining: 5, Reset: time.Now().Add(3 * time.Second)})
		// The store did not refill while held: its tokens come back at
		// the rate from now, one in a tenth of a second.
		time.Sleep(100 * time.Millisecond)
		assert.True(t, c.Allow(), "b's newer answer: 5 left")
	})
}

func TestSharedStoreDownFallsBackAndRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newMemStore()
		var mu sync.Mutex
		var kinds []EventKind
		b := NewBucket(Config{Limit: 10, Burst: 10, Name: "api", Store: store, StoreShare: 0.5, OnEvent: func(e Event) {
			mu.Lock()
			kinds = append(kinds, e.Kind)
			mu.Unlock()
		}})
		store.fail.Store(true)
		admitted := 0
		for range 20 {
			if b.Allow() {
				admitted++
			}
		}
		assert.Equal(t, 5, admitted, "store down: half the burst, locally")
		calls := store.calls.Load()
		for range 5 {
			b.Allow()
		}
		assert.Equal(t, calls, store.calls.Load(), "no store call until the retry interval")

		start := time.Now()
		require.NoError(t, b.Wait(t.Context()), "waiting still works while the store is down")
		assert.Equal(t, 200*time.Millisecond, time.Since(start), "at half the rate")

		store.fail.Store(false)
		time.Sleep(2 * time.Second)
		assert.True(t, b.Allow(), "the store answers again")
		mu.Lock()
		assert.Equal(t, []EventKind{EventStoreDown, EventStoreUp}, kinds)
		mu.Unlock()
	})
}

func TestSharedWaitersFIFO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newMemStore()
		b := NewBucket(Config{Limit: 10, Burst: 1, Name: "api", Store: store})
		require.True(t, b.Allow())
		ws := newWaiters()
		for i := range 4 {
			ws.wait(t.Context(), b, i, 1)
		}
		got := ws.results()
		for i := range 4 {
			assert.Equal(t, result{i, time.Duration(i+1) * 100 * time.Millisecond, nil}, got[i])
		}
	})
}

// slowStore's Take blocks until its context ends, as a hung store.
type slowStore struct{ memStore }

func (s *slowStore) Take(ctx context.Context, _ string, _ int, _ rate.Limit, _ int) (time.Duration, error) {
	<-ctx.Done()
	return 0, ctx.Err()
}

func TestSharedCallerGivingUpIsNotGranted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var kinds []EventKind
		b := NewBucket(Config{Limit: 10, Name: "api", Store: &slowStore{*newMemStore()}, OnEvent: func(e Event) { kinds = append(kinds, e.Kind) }})
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		err := b.Wait(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded, "a caller whose context ends during the store call is not granted")
		assert.NotContains(t, kinds, EventStoreDown, "the caller gave up; the store was not judged down")
	})
}

func TestSharedMaxWaitBehindHead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newMemStore()
		b := NewBucket(Config{Limit: 1, Burst: 1, Name: "api", Store: store, MaxWait: 2500 * time.Millisecond})
		require.True(t, b.Allow())
		ws := newWaiters()
		for i := range 3 {
			ws.wait(t.Context(), b, i, 1) // served at 1s, 2s; the third would be at 3s
		}
		got := ws.results()
		assert.Equal(t, result{0, time.Second, nil}, got[0])
		assert.Equal(t, result{1, 2 * time.Second, nil}, got[1])
		require.ErrorIs(t, got[2].err, ErrWaitTooLong)
		// At 2s it is the head and the store says 1s more: past its 2.5s
		// MaxWait, so it fails then, not when it would have been served.
		assert.Equal(t, 2*time.Second, got[2].at)
	})
}
