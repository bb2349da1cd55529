package throttle

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFlightSettleRefundReleasesWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 10, Burst: 10})
		f, err := b.BeginN(t.Context(), 10)
		require.NoError(t, err)
		assert.InDelta(t, 0, b.Tokens(), 1e-9, "BeginN(10) took 10 tokens")

		start := time.Now()
		waited := make(chan time.Duration, 1)
		go func() {
			assert.NoError(t, b.WaitN(t.Context(), 5))
			waited <- time.Since(start)
		}()
		synctest.Wait()
		require.Equal(t, 1, b.Stats().Queued, "5 tokens are 500ms away: the waiter queues")

		require.NoError(t, f.Settle(4)) // it cost 4: 6 come back
		assert.Equal(t, time.Duration(0), <-waited, "the refund released the queued waiter at once")
		assert.InDelta(t, 1, b.Tokens(), 1e-9, "6 given back, 5 taken by the waiter")

		require.NoError(t, f.Settle(4))
		assert.InDelta(t, 1, b.Tokens(), 1e-9, "settling the same cost again changes nothing")
		f.Done(nil)
		require.NoError(t, f.Settle(4))
		assert.InDelta(t, 1, b.Tokens(), 1e-9, "nor after Done")
	})
}

func TestFlightSettleExtraDebit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 10, Burst: 10})
		f, err := b.BeginN(t.Context(), 2)
		require.NoError(t, err)
		require.NoError(t, f.Settle(12)) // it cost 12: 10 more
		assert.InDelta(t, -2, b.Tokens(), 1e-9, "the extra debit leaves the bucket in debt")

		start := time.Now()
		require.NoError(t, b.Wait(t.Context()))
		assert.Equal(t, 300*time.Millisecond, time.Since(start), "3 tokens at 10/s pay the debt and the request")

		require.NoError(t, f.Settle(7)) // a later, lower figure replaces 12: 5 back
		assert.InDelta(t, 5, b.Tokens(), 1e-9)
		require.NoError(t, f.Settle(100)) // far beyond the burst: a debt, not an error
		assert.InDelta(t, -88, b.Tokens(), 1e-9)
	})
}

func TestFlightSettleDebitFailsWaiterPastMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 10, Burst: 10, MaxWait: time.Second})
		f, err := b.BeginN(t.Context(), 10)
		require.NoError(t, err)
		errc := make(chan error, 1)
		go func() { errc <- b.WaitN(t.Context(), 5) }() // 500ms away
		synctest.Wait()
		start := time.Now()
		require.NoError(t, f.Settle(20)) // 10 more: the wait is now 1.5s
		err = <-errc
		assert.ErrorIs(t, err, ErrWaitTooLong, "re-planned beyond MaxWait, it fails")
		assert.Equal(t, time.Duration(0), time.Since(start), "at once")
	})
}

func TestFlightSettleBadInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 10, Burst: 10})
		f, err := b.BeginN(t.Context(), 3)
		require.NoError(t, err)
		assert.ErrorIs(t, f.Settle(-1), ErrBadCost)
		assert.InDelta(t, 7, b.Tokens(), 1e-9, "a bad figure changes nothing")

		var zero Flight
		assert.NoError(t, zero.Settle(5), "the zero Flight ignores Settle")

		_, err = b.BeginN(t.Context(), 11)
		assert.ErrorIs(t, err, ErrExceedsBurst)
		_, err = b.BeginN(t.Context(), -1)
		assert.Error(t, err)
		assert.Equal(t, 1, b.Stats().InFlight, "refused: not in flight (f is)")

		f0, err := b.BeginN(t.Context(), 0)
		require.NoError(t, err)
		assert.Equal(t, 2, b.Stats().InFlight, "a request of cost 0 is in flight")
		f0.Done(nil)
		f.Done(nil)
		assert.Equal(t, 0, b.Stats().InFlight)
	})
}

// okBase answers every request with 200 and no headers, counting them.
func okBase(sent *atomic.Int64) roundTripFunc {
	return func(r *http.Request) (*http.Response, error) {
		sent.Add(1)
		return newResponse(r, http.StatusOK, nil, "ok"), nil
	}
}

func get(t *testing.T, tr http.RoundTripper, ctx context.Context) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", "http://api.test/v1/chat", nil)
	require.NoError(t, err)
	return tr.RoundTrip(req)
}

func TestTransportCost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int64
		tr := &Transport{
			Base:   okBase(&sent),
			Config: Config{Limit: 10, Burst: 10},
			Cost:   func(r *http.Request) int { return 3 },
		}
		tokens := func() float64 { return tr.Stats().Keys["api.test"].Tokens }

		_, err := get(t, tr, t.Context())
		require.NoError(t, err)
		assert.InDelta(t, 7, tokens(), 1e-9, "Cost says 3")

		ctx := WithCost(t.Context(), 5)
		resp, err := get(t, tr, ctx)
		require.NoError(t, err)
		assert.InDelta(t, 2, tokens(), 1e-9, "WithCost wins over Cost")

		require.NoError(t, SettleResponse(resp, 1))
		assert.InDelta(t, 6, tokens(), 1e-9, "settled from the response: 4 back")
		require.NoError(t, Settle(ctx, 1))
		assert.InDelta(t, 6, tokens(), 1e-9, "settled twice: once")
		require.NoError(t, Settle(ctx, 2))
		assert.InDelta(t, 5, tokens(), 1e-9, "a new figure replaces the old")

		start := time.Now()
		_, err = get(t, tr, WithCost(t.Context(), 10))
		require.NoError(t, err)
		assert.Equal(t, 500*time.Millisecond, time.Since(start), "10 tokens, 5 there: 500ms at 10/s")

		_, err = get(t, tr, WithCost(t.Context(), -2))
		assert.ErrorIs(t, err, ErrBadCost)
		var re *RefusedError
		assert.ErrorAs(t, err, &re)
		_, err = get(t, tr, WithCost(t.Context(), 11))
		assert.ErrorIs(t, err, ErrExceedsBurst)
		assert.Equal(t, int64(3), sent.Load(), "the refused requests were not sent")

		assert.Error(t, Settle(t.Context(), 1), "no cost in the context")
		assert.ErrorIs(t, Settle(ctx, -1), ErrBadCost)
		assert.Error(t, Settle(WithCost(t.Context(), 2), 1), "nothing admitted under it")
		assert.Error(t, SettleResponse(nil, 1))
	})
}

func TestTransportSettleAfterEviction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int64
		tr := &Transport{Base: okBase(&sent), Config: Config{Limit: 10, Burst: 10}, IdleTimeout: time.Minute}
		ctx := WithCost(t.Context(), 4)
		_, err := get(t, tr, ctx)
		require.NoError(t, err)
		time.Sleep(2 * time.Minute)
		_, err = get(t, tr, t.Context()) // sweeps the idle bucket, makes a new one
		require.NoError(t, err)
		fresh := tr.Stats().Keys["api.test"].Tokens
		require.NoError(t, Settle(ctx, 0), "settling a dropped bucket is harmless")
		assert.Equal(t, fresh, tr.Stats().Keys["api.test"].Tokens, "and does not touch the new bucket")
	})
}

func TestTransportUnit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				h := http.Header{}
				h.Set("X-Ratelimit-Limit-Requests", "1000")
				h.Set("X-Ratelimit-Remaining-Requests", "999")
				h.Set("X-Ratelimit-Reset-Requests", "60ms")
				h.Set("X-Ratelimit-Limit-Tokens", "600")
				h.Set("X-Ratelimit-Remaining-Tokens", "0")
				h.Set("X-Ratelimit-Reset-Tokens", "6s")
				return newResponse(r, http.StatusOK, h, "ok"), nil
			}),
			Config: Config{Limit: 100, Burst: 100},
			Unit:   "tokens",
		}
		_, err := get(t, tr, WithCost(t.Context(), 50))
		require.NoError(t, err)
		st := tr.Stats().Keys["api.test"]
		assert.LessOrEqual(t, st.Tokens, 0.0, "the token quota's Remaining 0 caps the bucket")
		start := time.Now()
		_, err = get(t, tr, WithCost(t.Context(), 50))
		require.NoError(t, err)
		assert.GreaterOrEqual(t, time.Since(start), 6*time.Second, "held until the token quota resets, in 6s; the request quota allows 999 more")
	})
}

func TestTransportRefuse429(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int64
		tr := &Transport{
			Base:    okBase(&sent),
			Config:  Config{Limit: 1, Burst: 1, MaxWait: time.Second},
			Refusal: Refuse429,
		}
		_, err := get(t, tr, t.Context())
		require.NoError(t, err)
		req, err := http.NewRequestWithContext(WithCost(t.Context(), 1), "POST", "http://api.test/v1/chat", strings.NewReader("{}"))
		require.NoError(t, err)
		// One token at 1/s is 1s away: within MaxWait. The second, 2s, is not.
		queued := make(chan error)
		go func() {
			_, err := get(t, tr, t.Context())
			queued <- err
		}()
		synctest.Wait()
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err, "Refuse429 answers a refusal with a response")
		assert.Equal(t, time.Duration(0), time.Since(start), "at once")
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		assert.Equal(t, "429 Too Many Requests", resp.Status)
		assert.Equal(t, "false", resp.Header.Get("X-Should-Retry"))
		assert.Equal(t, "wait-too-long", resp.Header.Get(RefusedHeader))
		assert.Equal(t, "2", resp.Header.Get("Retry-After"), "the predicted wait, rounded up")
		assert.Same(t, req, resp.Request)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Contains(t, string(body), "wait too long")
		assert.EqualValues(t, len(body), resp.ContentLength)
		require.NoError(t, resp.Body.Close())
		assert.Error(t, Settle(req.Context(), 1), "refused: nothing to settle")

		resp, err = get(t, tr, WithCost(t.Context(), 2))
		require.NoError(t, err)
		assert.Equal(t, "exceeds-burst", resp.Header.Get(RefusedHeader))
		assert.Empty(t, resp.Header.Get("Retry-After"), "no wait helps")
		resp.Body.Close()
		resp, err = get(t, tr, WithCost(t.Context(), -1))
		require.NoError(t, err)
		assert.Equal(t, "bad-cost", resp.Header.Get(RefusedHeader))
		resp.Body.Close()

		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err = get(t, tr, ctx)
		assert.ErrorIs(t, err, context.Canceled, "the end of the caller's context stays an error")
		require.NoError(t, <-queued)
		assert.Equal(t, int64(2), sent.Load(), "nothing refused was sent")
	})
}

func TestRefusalReason(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{ErrQueueFull, "queue-full"},
		{ErrWaitTooLong, "wait-too-long"},
		{ErrExceedsBurst, "exceeds-burst"},
		{ErrBadCost, "bad-cost"},
		{context.Canceled, ""},
		{errors.New("other"), ""},
	} {
		if got := refusalReason(tc.err); got != tc.want {
			t.Errorf("refusalReason(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// FuzzSettle drives a bucket that never queues with BeginN, Settle and the
// passing of time in virtual time, and checks its tokens against a model of
// the documented arithmetic: refill at Limit up to Burst, BeginN takes n
// when n are there (else ErrQueueFull; above Burst ErrExceedsBurst; 0
// always),
// Settle(m) takes m minus what the flight took so far, a refund never
// filling beyond Burst, and settling the same figure again changes nothing.
// Each op byte: the low two bits choose the operation, the rest its
// argument.
func FuzzSettle(f *testing.F) {
	// Seeded from the Settle tests: a refund, an extra debit, settling twice,
	// a cost above the burst.
	f.Add([]byte{4 * 10, 1 + 4*4, 2, 3 + 4*5})
	f.Add([]byte{4 * 2, 1 + 4*12, 3 + 4*30, 1 + 4*7, 2})
	f.Add([]byte{4 * 25, 4 * 0, 1, 2, 3 + 4*63})
	f.Fuzz(func(t *testing.T, ops []byte) {
		synctest.Test(t, func(t *testing.T) {
			const limit, burst = 10.0, 20
			b := NewBucket(Config{Limit: limit, Burst: burst, MaxQueue: -1})
			tok := float64(burst) // an explicit burst starts full
			var fl Flight
			taken := 0 // what fl has taken, as settled
			for i, op := range ops {
				arg := int(op >> 2)
				switch op & 3 {
				case 0:
					n := arg % 26
					g, err := b.BeginN(t.Context(), n)
					switch {
					case n > burst:
						require.ErrorIs(t, err, ErrExceedsBurst, "op %d: BeginN(%d)", i, n)
					case n > 0 && float64(n) > tok+1e-9:
						require.ErrorIs(t, err, ErrQueueFull, "op %d: BeginN(%d) with %.3f tokens", i, n, tok)
					default:
						require.NoError(t, err, "op %d: BeginN(%d) with %.3f tokens", i, n, tok)
						fl.Done(nil)
						fl, taken = g, n
						tok -= float64(n)
					}
				case 1, 2:
					m := arg % 40
					if op&3 == 2 {
						m = taken // the same figure again
					}
					require.NoError(t, fl.Settle(m))
					if fl.b != nil {
						tok = min(tok-float64(m-taken), float64(burst))
						taken = m
					}
				case 3:
					d := time.Duration(arg) * 50 * time.Millisecond
					time.Sleep(d)
					tok = min(tok+limit*d.Seconds(), float64(burst))
				}
				require.InDelta(t, tok, b.Tokens(), 1e-6, "op %d (%#x)", i, op)
			}
			fl.Done(nil)
			require.Equal(t, 0, b.Stats().InFlight)
		})
	})
}

// TestDefaultBurstHoldsTheCost: the default burst, which counts requests,
// grows to hold the largest cost asked (a cost in tokens is not refused
// for a burst of a few), but not beyond the server's limit per window,
// which no request above could ever pass.
func TestDefaultBurstHoldsTheCost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 100})
		start := time.Now()
		require.NoError(t, b.WaitN(t.Context(), 300), "the default burst grows to 300")
		assert.Equal(t, 2990*time.Millisecond, time.Since(start), "one token to start with, 299 at 100/s")
		assert.Equal(t, 300, b.Burst())
		b.SetLimit(50)
		assert.Equal(t, 300, b.Burst(), "and keeps holding it when the rate changes")

		explicit := NewBucket(Config{Limit: 100, Burst: 10})
		assert.ErrorIs(t, explicit.WaitN(t.Context(), 11), ErrExceedsBurst, "an explicit burst is a bound")

		learned := NewBucket(Config{})
		learned.ObserveQuota(http.StatusOK, Quota{Limit: 1000, Remaining: 1000, Window: time.Minute, Reset: time.Now().Add(time.Minute)})
		require.NoError(t, learned.WaitN(t.Context(), 900))
		assert.ErrorIs(t, learned.WaitN(t.Context(), 1001), ErrExceedsBurst, "more than the server's limit per window")
	})
}
