package throttle

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitAs queues a waiter of priority p, as waiters.wait does.
func (ws *waiters) waitAs(ctx context.Context, b *Bucket, p Priority, id, n int) {
	ws.wait(WithPriority(ctx, p), b, id, n)
}

func TestPriorityLevels(t *testing.T) {
	for _, tc := range []struct {
		p     Priority
		level int
		name  string
	}{
		{PriorityLow - 5, 0, "low"},
		{PriorityLow, 0, "low"},
		{PriorityNormal, 1, "normal"},
		{PriorityHigh, 2, "high"},
		{PriorityHigh + 5, 2, "high"},
	} {
		assert.Equal(t, tc.level, tc.p.level(), "Priority(%d).level()", tc.p)
		assert.Equal(t, tc.name, tc.p.String(), "Priority(%d).String()", tc.p)
	}
	assert.Equal(t, PriorityNormal, PriorityFrom(context.Background()), "no priority in the context")
	assert.Equal(t, PriorityHigh, PriorityFrom(WithPriority(context.Background(), PriorityHigh)))
}

func TestPriorityOrderAcrossLevels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 1, Burst: 1, MaxWait: -1})
		require.True(t, b.Allow())
		ws := newWaiters()
		ws.waitAs(t.Context(), b, PriorityLow, 0, 1)
		ws.waitAs(t.Context(), b, PriorityNormal, 1, 1)
		ws.waitAs(t.Context(), b, PriorityHigh, 2, 1)
		ws.waitAs(t.Context(), b, PriorityLow, 3, 1)
		ws.waitAs(t.Context(), b, PriorityHigh, 4, 1)
		ws.wait(t.Context(), b, 5, 1) // no priority: normal
		got := ws.results()
		for i, id := range []int{2, 4, 1, 5, 0, 3} {
			want := time.Duration(i+1) * time.Second
			assert.Equal(t, result{id, want, nil}, got[id], "waiter %d", id)
		}
	})
}

func TestPriorityWeightedHeadWithinLevel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 1, Burst: 5, MaxWait: -1})
		require.True(t, b.AllowN(5))
		ws := newWaiters()
		ws.waitAs(t.Context(), b, PriorityLow, 0, 1)
		ws.waitAs(t.Context(), b, PriorityNormal, 1, 5) // the head of its level: 5s
		ws.waitAs(t.Context(), b, PriorityNormal, 2, 1) // not ahead of it
		time.Sleep(3 * time.Second)
		assert.False(t, b.Allow(), "Allow overtook queued waiters with 3 tokens in the bucket")
		ws.waitAs(t.Context(), b, PriorityHigh, 3, 2) // the tokens are there and nobody of its level waits
		got := ws.results()
		assert.Equal(t, result{3, 3 * time.Second, nil}, got[3], "high takes the tokens at once")
		assert.Equal(t, result{1, 7 * time.Second, nil}, got[1], "the weighted head waits for 2 more tokens")
		assert.Equal(t, result{2, 8 * time.Second, nil}, got[2])
		assert.Equal(t, result{0, 9 * time.Second, nil}, got[0])
	})
}

// TestPriorityAgingBound checks the bound of Config.Aging to the
// nanosecond: a low waiter is overtaken by a caller d levels higher that
// arrives less than d×Aging after it, and not by one that arrives then.
func TestPriorityAgingBound(t *testing.T) {
	const aging = time.Second
	for _, tc := range []struct {
		name      string
		p         Priority
		after     time.Duration // after the low waiter
		overtakes bool
	}{
		{"high/just before", PriorityHigh, 2*aging - 1, true},
		{"high/at the bound", PriorityHigh, 2 * aging, false},
		{"normal/just before", PriorityNormal, aging - 1, true},
		{"normal/at the bound", PriorityNormal, aging, false},
		{"low/at once", PriorityLow, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := NewBucket(Config{Limit: 0.1, Burst: 1, MaxWait: -1, Aging: aging})
				require.True(t, b.Allow())
				ws := newWaiters()
				time.Sleep(time.Second / 10)
				ws.waitAs(t.Context(), b, PriorityLow, 0, 1) // planned at 10s
				time.Sleep(tc.after)
				ws.waitAs(t.Context(), b, tc.p, 1, 1)
				got := ws.results()
				first, second := got[0], got[1]
				if tc.overtakes {
					first, second = second, first
				}
				assert.Equal(t, 10*time.Second, first.at, "waiter %d served first", first.id)
				assert.Equal(t, 20*time.Second, second.at, "waiter %d served second", second.id)
			})
		})
	}
}

// TestPriorityAgingUnderStream sends a high-priority caller every half
// second, more than the bucket serves: a low waiter still goes once it has
// waited 2×Aging, and the highs that arrived after that wait for it.
func TestPriorityAgingUnderStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 1, Burst: 1, MaxWait: -1, MaxQueue: 100, Aging: 3 * time.Second})
		require.True(t, b.Allow())
		ws := newWaiters()
		time.Sleep(time.Second / 4)
		ws.waitAs(t.Context(), b, PriorityLow, 0, 1)
		for i := 1; i <= 20; i++ {
			time.Sleep(time.Second / 2)
			ws.waitAs(t.Context(), b, PriorityHigh, i, 1)
		}
		got := ws.results()
		// Highs 1..11 arrive before 6.25s (2×Aging after the low one) and go
		// first, at 1s..11s; the low one is next; the rest follow.
		for i := 1; i <= 11; i++ {
			assert.Equal(t, time.Duration(i)*time.Second, got[i].at, "high %d", i)
		}
		assert.Equal(t, result{0, 12 * time.Second, nil}, got[0], "the low waiter after 2×Aging")
		for i := 12; i <= 20; i++ {
			assert.Equal(t, time.Duration(i+1)*time.Second, got[i].at, "high %d", i)
		}
	})
}

func TestPriorityNoAging(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 0.1, Burst: 1, MaxWait: -1, Aging: -1})
		require.True(t, b.Allow())
		ws := newWaiters()
		ws.waitAs(t.Context(), b, PriorityLow, 0, 1) // planned at 10s
		time.Sleep(9 * time.Second)
		ws.waitAs(t.Context(), b, PriorityHigh, 1, 1)
		got := ws.results()
		assert.Equal(t, result{1, 10 * time.Second, nil}, got[1], "no aging: the high one goes first, however late")
		assert.Equal(t, result{0, 20 * time.Second, nil}, got[0])
	})
}

func TestPriorityDisplacement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 1, Burst: 1, MaxQueue: 2, MaxWait: -1})
		require.True(t, b.Allow())
		ws := newWaiters()
		ws.waitAs(t.Context(), b, PriorityLow, 0, 1)
		ws.waitAs(t.Context(), b, PriorityLow, 1, 1)
		ws.waitAs(t.Context(), b, PriorityNormal, 2, 1) // displaces 1, the newest low
		ws.waitAs(t.Context(), b, PriorityHigh, 3, 1)   // displaces 0, the last low
		require.ErrorIs(t, b.Wait(WithPriority(t.Context(), PriorityNormal)), ErrQueueFull, "nobody of a lower level to displace")
		require.ErrorIs(t, b.Wait(WithPriority(t.Context(), PriorityLow)), ErrQueueFull)
		got := ws.results()
		require.ErrorIs(t, got[1].err, ErrQueueFull)
		assert.Contains(t, got[1].err.Error(), "displaced")
		assert.Equal(t, time.Duration(0), got[1].at, "displaced at once")
		require.ErrorIs(t, got[0].err, ErrQueueFull)
		assert.Equal(t, time.Duration(0), got[0].at)
		assert.Equal(t, result{3, time.Second, nil}, got[3])
		assert.Equal(t, result{2, 2 * time.Second, nil}, got[2])
		assert.Equal(t, uint64(4), b.Stats().RefusedFull, "two displaced, two refused")
	})
}

func TestPriorityDisplacementSparesAged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 0.1, Burst: 1, MaxQueue: 1, MaxWait: -1, Aging: time.Second})
		require.True(t, b.Allow())
		ws := newWaiters()
		ws.waitAs(t.Context(), b, PriorityLow, 0, 1) // planned at 10s
		time.Sleep(time.Second)                      // it is now as good as a normal one
		require.ErrorIs(t, b.Wait(WithPriority(t.Context(), PriorityNormal)), ErrQueueFull)
		short, cancel := context.WithTimeout(WithPriority(t.Context(), PriorityHigh), time.Second)
		defer cancel()
		require.ErrorIs(t, b.Wait(short), ErrWaitTooLong, "a caller refused for its wait displaces nobody")
		ws.waitAs(t.Context(), b, PriorityHigh, 1, 1) // displaces it
		got := ws.results()
		require.ErrorIs(t, got[0].err, ErrQueueFull)
		assert.Equal(t, time.Second, got[0].at)
		assert.Equal(t, result{1, 10 * time.Second, nil}, got[1])

		ws = newWaiters()
		ws.waitAs(t.Context(), b, PriorityLow, 0, 1) // planned 10s later
		time.Sleep(2 * time.Second)                  // now as good as a high one
		require.ErrorIs(t, b.Wait(WithPriority(t.Context(), PriorityHigh)), ErrQueueFull)
		assert.Equal(t, result{0, 10 * time.Second, nil}, ws.results()[0])
	})
}

// TestPriorityReplanOnOvertake puts high-priority callers ahead of low ones
// whose MaxWait leaves them one token of margin: the first overtaking
// leaves everyone in time, the second makes the last low waiter fail at
// once.
func TestPriorityReplanOnOvertake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 1, Burst: 1, MaxWait: 4 * time.Second})
		require.True(t, b.Allow())
		ws := newWaiters()
		for i := range 3 {
			ws.waitAs(t.Context(), b, PriorityLow, i, 1) // 1s, 2s, 3s
		}
		ws.waitAs(t.Context(), b, PriorityHigh, 3, 1) // the lows move to 2s, 3s, 4s: still in time
		deadline, cancel := context.WithTimeout(t.Context(), 3500*time.Millisecond)
		defer cancel()
		ws.waitAs(deadline, b, PriorityLow, 4, 1) // would be 5s: refused
		ws.waitAs(t.Context(), b, PriorityHigh, 5, 1)
		got := ws.results()
		assert.Equal(t, result{3, time.Second, nil}, got[3])
		assert.Equal(t, result{5, 2 * time.Second, nil}, got[5])
		assert.Equal(t, result{0, 3 * time.Second, nil}, got[0])
		assert.Equal(t, result{1, 4 * time.Second, nil}, got[1])
		require.ErrorIs(t, got[2].err, ErrWaitTooLong, "pushed to 5s, beyond MaxWait")
		assert.Equal(t, time.Duration(0), got[2].at, "fails when overtaken, not at its deadline")
		assert.Contains(t, got[2].err.Error(), "need 5s, MaxWait 4s")
		require.ErrorIs(t, got[4].err, ErrWaitTooLong)
		require.ErrorIs(t, got[4].err, context.DeadlineExceeded)
	})
}

// TestPriorityReplanOnTakeAtOnce: a high caller that takes the tokens a
// weighted low head was saving for pushes the head past its MaxWait.
func TestPriorityReplanOnTakeAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 1, Burst: 3, MaxWait: 3 * time.Second})
		require.True(t, b.AllowN(3))
		ws := newWaiters()
		ws.waitAs(t.Context(), b, PriorityLow, 0, 3) // planned at 3s: no margin
		time.Sleep(time.Second)
		require.NoError(t, b.Wait(WithPriority(t.Context(), PriorityHigh)))
		got := ws.results()
		require.ErrorIs(t, got[0].err, ErrWaitTooLong)
		assert.Equal(t, time.Second, got[0].at, "fails as it is overtaken")
	})
}

// TestPriorityReplanUnderCooldown overtakes low waiters during a cooldown,
// when the plan is not a steady rate: the one that can no longer make its
// MaxWait fails as it is overtaken.
func TestPriorityReplanUnderCooldown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 1, Burst: 1, MaxWait: 10 * time.Second})
		b.ObserveQuota(http.StatusTooManyRequests, Quota{Limit: -1, Remaining: -1, RetryAfter: 5 * time.Second})
		ctx, cancel := context.WithCancel(t.Context())
		ws := newWaiters()
		ws.waitAs(ctx, b, PriorityLow, 0, 1)
		ws.waitAs(ctx, b, PriorityLow, 1, 1)
		highs := 0
		for b.Stats().RefusedTooLong == 0 && highs < 20 {
			highs++
			ws.waitAs(ctx, b, PriorityHigh, 1+highs, 1)
		}
		require.Equal(t, uint64(1), b.Stats().RefusedTooLong, "after %d highs, one low waiter fails", highs)
		cancel()
		got := ws.results()
		require.ErrorIs(t, got[1].err, ErrWaitTooLong, "the last low waiter")
		assert.Equal(t, time.Duration(0), got[1].at, "fails at once")
		require.ErrorIs(t, got[0].err, context.Canceled, "the other is still waiting")
	})
}

func TestPriorityCancelRefunds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 1, Burst: 1, MaxWait: -1})
		require.True(t, b.Allow())
		ws := newWaiters()
		high, cancelHigh := context.WithCancel(WithPriority(t.Context(), PriorityHigh))
		normal, cancelNormal := context.WithCancel(t.Context())
		ws.waitAs(t.Context(), b, PriorityLow, 0, 1)  // 4s, then 2s
		ws.wait(high, b, 1, 1)                        // 1s: cancelled
		ws.wait(normal, b, 2, 1)                      // 3s: cancelled
		ws.waitAs(t.Context(), b, PriorityHigh, 3, 1) // 2s, then 1s
		time.Sleep(time.Second / 2)
		cancelHigh()
		synctest.Wait()
		cancelNormal()
		got := ws.results()
		require.ErrorIs(t, got[1].err, context.Canceled)
		assert.Equal(t, time.Second/2, got[1].at)
		assert.Equal(t, result{3, time.Second, nil}, got[3], "the next high takes the cancelled one's place")
		require.ErrorIs(t, got[2].err, context.Canceled)
		assert.Equal(t, result{0, 2 * time.Second, nil}, got[0], "the low one moves up by two")
		assert.Equal(t, uint64(2), b.Stats().Canceled)
	})
}

func TestTransportPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var order []string
		tr := &Transport{
			Config: Config{Limit: 1, Burst: 1, MaxWait: -1},
			Base: roundTripFunc(func(req *http.Request) (*http.Response, error) {
				mu.Lock()
				order = append(order, req.URL.Path)
				mu.Unlock()
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
			}),
			Priority: func(req *http.Request) Priority {
				if req.Header.Get("X-Interactive") != "" {
					return PriorityHigh
				}
				return PriorityFrom(req.Context())
			},
		}
		var wg sync.WaitGroup
		send := func(path string, interactive bool, ctx context.Context) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.example"+path, nil)
			require.NoError(t, err)
			if interactive {
				req.Header.Set("X-Interactive", "1")
			}
			wg.Go(func() {
				resp, err := tr.RoundTrip(req)
				if assert.NoError(t, err) {
					_ = resp.Body.Close()
				}
			})
			synctest.Wait()
		}
		send("/first", false, t.Context()) // takes the token
		send("/sync", false, WithPriority(t.Context(), PriorityLow))
		send("/list", false, t.Context())
		send("/click", true, t.Context())
		wg.Wait()
		assert.Equal(t, []string{"/first", "/click", "/list", "/sync"}, order)
	})
}

// TestPriorityReplanAfterAging: a waiter that aged into a higher level
// keeps its margin there, so that a caller overtaking it in its new level
// still re-plans it.
func TestPriorityReplanAfterAging(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 0.25, Burst: 1, MaxWait: 5 * time.Second, Aging: time.Second})
		require.True(t, b.Allow())
		ws := newWaiters()
		ws.waitAs(t.Context(), b, PriorityLow, 0, 1) // planned at 4s: 1s of margin
		time.Sleep(1500 * time.Millisecond)          // now at the normal level
		ws.waitAs(t.Context(), b, PriorityHigh, 1, 1)
		got := ws.results()
		require.ErrorIs(t, got[0].err, ErrWaitTooLong, "pushed to 8s, beyond MaxWait")
		assert.Equal(t, 1500*time.Millisecond, got[0].at, "fails as it is overtaken")
		assert.Equal(t, result{1, 4 * time.Second, nil}, got[1])
	})
}

// TestPriorityShared: with a Store the queue stays local and its head asks
// the store; a high-priority caller becomes the head and goes first.
func TestPriorityShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 1, Burst: 1, MaxWait: -1, Store: newMemStore(), Name: "prio"})
		require.True(t, b.Allow())
		ws := newWaiters()
		ws.waitAs(t.Context(), b, PriorityLow, 0, 1)
		ws.waitAs(t.Context(), b, PriorityLow, 1, 1)
		ws.waitAs(t.Context(), b, PriorityHigh, 2, 1)
		got := ws.results()
		assert.Equal(t, result{2, time.Second, nil}, got[2])
		assert.Equal(t, result{0, 2 * time.Second, nil}, got[0])
		assert.Equal(t, result{1, 3 * time.Second, nil}, got[1])
	})
}
