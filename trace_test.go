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

// traceLog records what a Trace is told.
type traceLog struct {
	mu      sync.Mutex
	waits   []WaitInfo
	answers []AnswerInfo
	ctxs    []context.Context
}

func (l *traceLog) trace() *Trace {
	return &Trace{
		Waited: func(ctx context.Context, w WaitInfo) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.waits = append(l.waits, w)
		},
		Answered: func(ctx context.Context, a AnswerInfo) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.answers = append(l.answers, a)
			l.ctxs = append(l.ctxs, ctx)
		},
	}
}

func (l *traceLog) lastWait(t *testing.T) WaitInfo {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	require.NotEmpty(t, l.waits, "Trace.Waited was not called")
	return l.waits[len(l.waits)-1]
}

func TestTraceWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log traceLog
		b := NewBucket(Config{Limit: 10, Burst: 1, Name: "api", Trace: log.trace()})
		ctx := context.Background()
		require.NoError(t, b.Wait(ctx))
		assert.Empty(t, log.waits, "a caller admitted at once is not reported")

		ws := newWaiters()
		ws.wait(ctx, b, 1, 1)
		ws.wait(ctx, b, 2, 1)
		ws.results()
		require.Len(t, log.waits, 2)
		for i, want := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond} {
			assert.Equal(t, WaitInfo{Name: "api", N: 1, Reason: WaitRate, Predicted: want, Waited: want}, log.waits[i], "wait %d", i)
		}

		// A 429 holds the bucket for 3 s: the answer reports the cooldown
		// and the next caller waits for it.
		b.ObserveQuota(http.StatusTooManyRequests, Quota{Limit: -1, Remaining: -1, RetryAfter: 3 * time.Second})
		require.Len(t, log.answers, 1)
		a := log.answers[0]
		assert.Equal(t, 3*time.Second, a.Cooldown, "AnswerInfo.Cooldown")
		assert.Equal(t, time.Now().Add(3*time.Second), a.Until, "AnswerInfo.Until")
		assert.Equal(t, http.StatusTooManyRequests, a.Status)
		assert.Equal(t, context.Background(), log.ctxs[0], "Observe knows no request's context")

		require.NoError(t, b.Wait(ctx))
		assert.Equal(t, WaitInfo{Name: "api", N: 1, Reason: WaitCooldown, Predicted: 3 * time.Second, Waited: 3 * time.Second}, log.lastWait(t))
	})
}

func TestTraceCancelledWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log traceLog
		b := NewBucket(Config{Limit: 1, Burst: 1, Trace: log.trace()})
		require.True(t, b.Allow())
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		err := b.Wait(ctx)
		require.ErrorIs(t, err, context.Canceled)
		w := log.lastWait(t)
		assert.Equal(t, WaitRate, w.Reason)
		assert.Equal(t, time.Second, w.Predicted)
		assert.Equal(t, 50*time.Millisecond, w.Waited)
		assert.ErrorIs(t, w.Err, context.Canceled)
	})
}

func TestTraceReplannedWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log traceLog
		b := NewBucket(Config{Limit: 1, Burst: 1, MaxWait: 2 * time.Second, Trace: log.trace()})
		require.True(t, b.Allow())
		ws := newWaiters()
		ws.wait(context.Background(), b, 1, 1)
		time.Sleep(200 * time.Millisecond)
		// A cooldown beyond MaxWait refuses the waiter at once.
		b.ObserveQuota(http.StatusTooManyRequests, Quota{Limit: -1, Remaining: -1, RetryAfter: 10 * time.Second})
		got := ws.results()
		require.ErrorIs(t, got[1].err, ErrWaitTooLong)
		w := log.lastWait(t)
		assert.Equal(t, time.Second, w.Predicted)
		assert.Equal(t, 200*time.Millisecond, w.Waited)
		assert.ErrorIs(t, w.Err, ErrWaitTooLong)
	})
}

func TestTraceFlightContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log traceLog
		b := NewBucket(Config{Limit: 10, Trace: log.trace()})
		type key struct{}
		ctx := context.WithValue(context.Background(), key{}, "request")
		f, err := b.Begin(ctx)
		require.NoError(t, err)
		f.DoneQuota(http.StatusOK, Quota{Limit: 100, Remaining: 42, Window: time.Minute})
		require.Len(t, log.answers, 1)
		assert.Equal(t, "request", log.ctxs[0].Value(key{}), "Answered gets Begin's context")
		assert.Equal(t, 42.0, log.answers[0].Quota.Remaining)
		assert.Zero(t, log.answers[0].Cooldown, "a 200 starts no cooldown")
	})
}

func TestTraceTransportContext(t *testing.T) {
	var log traceLog
	type key struct{}
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		h := http.Header{"Retry-After": {"1"}}
		return &http.Response{StatusCode: http.StatusTooManyRequests, Header: h, Body: http.NoBody, Request: r}, nil
	})
	tr := &Transport{Base: base, Config: Config{Limit: 10, Trace: log.trace()}}
	req, _ := http.NewRequestWithContext(context.WithValue(context.Background(), key{}, 7), "GET", "http://api.test/x", nil)
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Len(t, log.answers, 1)
	assert.Equal(t, 7, log.ctxs[0].Value(key{}), "Answered gets the request's context")
	assert.Equal(t, "api.test", log.answers[0].Name)
	assert.Positive(t, log.answers[0].Cooldown, "a 429 with Retry-After starts a cooldown")
}
