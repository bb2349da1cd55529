package throttle

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// metered returns a Transport whose buckets count tokens (the request's
// WithCost) at tokens/s with burst tokens, and whose Meter counts requests
// at requests/s with a burst of one, answered by base.
func metered(base http.RoundTripper, tokens float64, burst int, requests float64) *Transport {
	return &Transport{
		Base:   base,
		Config: Config{Limit: rate.Limit(tokens), Burst: burst},
		Unit:   "tokens",
		Meters: []Meter{{Unit: "requests", Config: Config{Limit: rate.Limit(requests), Burst: 1}}},
	}
}

// sendCosts sends one request per cost, as sendInTurn does, and returns when
// each was answered (sent, with an instant base), from the start.
func sendCosts(t *testing.T, tr http.RoundTripper, costs []int) ([]time.Duration, []error) {
	t.Helper()
	ctxs := make([]context.Context, len(costs))
	for i, n := range costs {
		ctxs[i] = WithCost(context.Background(), n)
	}
	return sendInTurn(t, tr, ctxs...)
}

// sendInTurn sends one request per context, each from its own goroutine,
// started once the last one is blocked so that they queue in this order, and
// returns when each was answered, from the start, and its error.
func sendInTurn(t *testing.T, tr http.RoundTripper, ctxs ...context.Context) ([]time.Duration, []error) {
	t.Helper()
	start := time.Now()
	answered := make([]time.Duration, len(ctxs))
	errs := make([]error, len(ctxs))
	var wg sync.WaitGroup
	for i, ctx := range ctxs {
		wg.Go(func() {
			resp, err := get(t, tr, ctx)
			if err == nil {
				resp.Body.Close()
			}
			answered[i], errs[i] = time.Since(start), err
		})
		synctest.Wait() // queued in this order
	}
	wg.Wait()
	return answered, errs
}

// background is n plain contexts, for sendInTurn.
func background(n int) []context.Context {
	return slices.Repeat([]context.Context{context.Background()}, n)
}

// refusedOnce answers the first request 429 with Retry-After retryAfter,
// and every later one 200.
func refusedOnce(retryAfter string) roundTripFunc {
	var calls atomic.Int64
	return func(r *http.Request) (*http.Response, error) {
		if calls.Add(1) == 1 {
			h := http.Header{}
			h.Set("Retry-After", retryAfter)
			return newResponse(r, http.StatusTooManyRequests, h, ""), nil
		}
		return newResponse(r, http.StatusOK, nil, "ok"), nil
	}
}

// TestMetersBothQuotas: a request goes when both its quotas can take its
// cost, so that whichever binds sets the pace, and neither is overspent.
func TestMetersBothQuotas(t *testing.T) {
	for _, tt := range []struct {
		name  string
		costs []int
		want  []time.Duration // when each request is sent
	}{
		// 2 requests/s bind: 10 tokens each are nothing to 100/s.
		{"requests bind", []int{10, 10, 10, 10}, []time.Duration{0, 500 * time.Millisecond, time.Second, 1500 * time.Millisecond}},
		// 100 tokens/s with a burst of 100 bind: 100 at once, then 1 s a request.
		{"tokens bind", []int{100, 100, 100}, []time.Duration{0, time.Second, 2 * time.Second}},
		// The binding quota changes from one request to the next.
		// 10 at 0.5 s by the requests, 100 at 1.1 s by the tokens (40 left at 0.5 s).
		{"each its own", []int{100, 10, 100}, []time.Duration{0, 500 * time.Millisecond, 1100 * time.Millisecond}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var sent atomic.Int64
				tr := metered(okBase(&sent), 100, 100, 2)
				got, errs := sendCosts(t, tr, tt.costs)
				for i, err := range errs {
					require.NoError(t, err, "request %d", i)
				}
				assert.Equal(t, tt.want, got)
			})
		})
	}
}

// TestMetersHoldNothing: a request that waits on one quota holds none of
// the other's tokens meanwhile, and is not overtaken by smaller ones.
func TestMetersHoldNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int64
		tr := &Transport{
			Base:   okBase(&sent),
			Config: Config{Limit: 100, Burst: 100},
			Unit:   "tokens",
			Meters: []Meter{{Unit: "requests", Config: Config{Limit: 1, Burst: 5}}},
		}
		// 100 tokens at once, then a request of 100 that waits 1 s for the
		// tokens, and one of 1 behind it.
		got, errs := sendCosts(t, tr, []int{100})
		require.NoError(t, errs[0])
		require.Equal(t, time.Duration(0), got[0])
		done := make(chan time.Duration, 2)
		start := time.Now()
		for _, n := range []int{100, 1} {
			go func() {
				resp, err := get(t, tr, WithCost(context.Background(), n))
				assert.NoError(t, err)
				resp.Body.Close()
				done <- time.Since(start)
			}()
			synctest.Wait()
		}
		time.Sleep(500 * time.Millisecond)
		assert.Equal(t, 2, tr.Stats().Keys["api.test"].Queued, "the key's queue")
		st := tr.Stats().Keys["api.test##requests"]
		assert.InDelta(t, 4.5, st.Tokens, 1e-9, "the waiting request holds none of the request quota")
		assert.Equal(t, time.Second, <-done, "the big one first, when its tokens are there")
		assert.Equal(t, 1010*time.Millisecond, <-done, "the small one behind it, when its token is there, not before")
		assert.EqualValues(t, 3, sent.Load())
	})
}

// TestMetersRefusals: the key's queue refuses up front a wait beyond
// MaxWait, refuses a cost beyond a Meter's burst, a negative one and a
// quota counted twice, and a cancelled waiter leaves it.
func TestMetersRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int64
		tr := metered(okBase(&sent), 100, 100, 1)
		tr.Config.MaxWait = 2 * time.Second
		tr.Meters[0].Cost = func(r *http.Request) int {
			if r.Header.Get("X-Cost") == "-1" {
				return -1
			}
			return 1
		}
		for i, err := range func() []error {
			_, errs := sendCosts(t, tr, []int{1, 1, 1})
			return errs
		}() {
			require.NoError(t, err, "request %d", i) // at 0, 1 s, 2 s
		}
		start := time.Now()
		_, err := get(t, tr, WithCost(context.Background(), 1))
		require.NoError(t, err, "at 1 s")
		_, err = get(t, tr, WithCost(context.Background(), 1))
		require.NoError(t, err, "at 2 s")
		assert.Equal(t, 2*time.Second, time.Since(start))
		// Two queued (at 3 s and 4 s); a third would wait 3 s.
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				_, err := get(t, tr, WithCost(context.Background(), 1))
				assert.NoError(t, err)
			})
			synctest.Wait()
		}
		_, err = get(t, tr, WithCost(context.Background(), 1))
		assert.ErrorIs(t, err, ErrWaitTooLong, "refused at once")
		wg.Wait()

		_, err = get(t, tr, WithCost(context.Background(), 101))
		assert.ErrorIs(t, err, ErrExceedsBurst)
		req, _ := http.NewRequest("GET", "http://api.test/x", nil)
		req.Header.Set("X-Cost", "-1")
		_, err = tr.RoundTrip(req)
		assert.ErrorIs(t, err, ErrBadCost)

		// A waiter cancelled leaves the queue; the one behind moves up.
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 2)
		go func() {
			_, err := get(t, tr, WithCost(ctx, 100))
			errc <- err
		}()
		synctest.Wait()
		start = time.Now()
		go func() {
			_, err := get(t, tr, WithCost(context.Background(), 1))
			errc <- err
		}()
		synctest.Wait()
		cancel()
		assert.ErrorIs(t, <-errc, context.Canceled)
		assert.NoError(t, <-errc)
		assert.LessOrEqual(t, time.Since(start), time.Second, "held by the request quota only, not for the cancelled one's tokens")

		twice := &Transport{Base: okBase(&sent), Unit: "Tokens", Meters: []Meter{{Unit: "tokens"}}}
		_, err = get(t, twice, context.Background())
		assert.ErrorContains(t, err, `the quota "tokens" is counted twice`)
		stored := &Transport{Base: okBase(&sent), Config: Config{Store: newMemStore()}, Meters: []Meter{{Unit: "tokens"}}}
		_, err = get(t, stored, context.Background())
		assert.ErrorContains(t, err, "Store cannot be used with Meters")
	})
}

// TestMetersLeaveTimeForTheAnswer: a request held by several quotas leaves
// time for its answer before its deadline, as one held by its own bucket
// does (minAnswerTime, where answers are quick).
func TestMetersLeaveTimeForTheAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int64
		tr := metered(okBase(&sent), 100, 100, 1)
		start := time.Now()
		_, err := get(t, tr, context.Background())
		require.NoError(t, err)
		// The request quota's next token comes at 1 s.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second+3*time.Millisecond)
		defer cancel()
		_, err = get(t, tr, ctx)
		assert.ErrorIs(t, err, ErrWaitTooLong, "3 ms left after the token")
		ctx, cancel = context.WithTimeout(context.Background(), time.Second+6*time.Millisecond)
		defer cancel()
		_, err = get(t, tr, ctx)
		assert.NoError(t, err, "6 ms left after the token")
		assert.Equal(t, time.Second, time.Since(start))
		assert.Equal(t, int64(2), sent.Load())
	})
}

// TestMetersLearnTheirOwn: each quota's bucket learns from its own headers
// (OpenAI's requests and tokens).
func TestMetersLearnTheirOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			h.Set("X-Ratelimit-Limit-Requests", "60")
			h.Set("X-Ratelimit-Remaining-Requests", "59")
			h.Set("X-Ratelimit-Reset-Requests", "1s")
			h.Set("X-Ratelimit-Limit-Tokens", "6000")
			h.Set("X-Ratelimit-Remaining-Tokens", "5900")
			h.Set("X-Ratelimit-Reset-Tokens", "1s")
			return newResponse(r, http.StatusOK, h, "ok"), nil
		})
		tr := &Transport{Base: base, Config: Config{Burst: 1000}, Unit: "tokens", Meters: []Meter{{Unit: "requests"}}}
		for range 3 {
			resp, err := get(t, tr, WithCost(context.Background(), 100))
			require.NoError(t, err)
			resp.Body.Close()
			time.Sleep(time.Second)
		}
		st := tr.Stats()
		require.Contains(t, st.Keys, "api.test")
		require.Contains(t, st.Keys, "api.test##requests")
		tok, req := st.Keys["api.test"], st.Keys["api.test##requests"]
		t.Logf("tokens %v/s, requests %v/s", tok.Limit, req.Limit)
		assert.InDelta(t, 100, float64(tok.Limit)/float64(req.Limit), 1e-9, "tokens learned from theirs (6000), requests from theirs (60)")
		assert.EqualValues(t, 3, req.Admitted)
		assert.EqualValues(t, 3, tok.Admitted)
	})
}

// TestMeters429AndFlights: a 429 cools every bucket the request was counted
// in, and MaxInFlight of the key's bucket bounds the requests of a
// Transport with Meters.
func TestMeters429AndFlights(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := refusedOnce("3")
		tr := metered(base, 100, 100, 10)
		resp, err := get(t, tr, WithCost(context.Background(), 1))
		require.NoError(t, err)
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		st := tr.Stats()
		assert.EqualValues(t, 1, st.Keys["api.test"].Cooldowns)
		assert.EqualValues(t, 1, st.Keys["api.test##requests"].Cooldowns)
		start := time.Now()
		_, err = get(t, tr, WithCost(context.Background(), 1))
		require.NoError(t, err)
		assert.Equal(t, 3*time.Second, time.Since(start), "held to the end of the cooldown")

		base2 := &concurrencyBase{latency: time.Second}
		tr = metered(base2, 1000, 1000, 1000)
		tr.Config.MaxInFlight = 3
		for i, err := range sendAll(t, tr, 24) {
			require.NoError(t, err, "request %d", i)
		}
		assert.EqualValues(t, 3, base2.max.Load())
	})
}

// TestMetersPerMinuteAndPerDay: two IETF policies of one server, a
// per-minute one counted by the key's bucket and a per-day one by a
// Meter, each learned from its own policy. The day's, paced evenly, would
// spread 5 requests over the day; with PaceBurst it lets them go at the
// minute's pace, and binds once spent.
func TestMetersPerMinuteAndPerDay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int64
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			n := calls.Add(1)
			h := http.Header{}
			h.Set("RateLimit-Policy", `"minute";q=600;w=60, "day";q=5;w=86400`)
			h.Set("RateLimit", fmt.Sprintf(`"minute";r=%d;t=60, "day";r=%d;t=86400`, 600-n, max(5-n, 0)))
			return newResponse(r, http.StatusOK, h, "ok"), nil
		})
		tr := &Transport{Base: base, Config: Config{MaxWait: time.Second}, Unit: "minute", Meters: []Meter{{Unit: "day", Config: Config{Pace: PaceBurst}}}}
		for i := range 5 {
			resp, err := get(t, tr, context.Background())
			require.NoError(t, err, "request %d", i)
			resp.Body.Close()
		}
		_, err := get(t, tr, context.Background())
		assert.ErrorIs(t, err, ErrWaitTooLong, "the day's quota is spent: a wait of hours, refused at once")
		st := tr.Stats().Keys
		assert.InDelta(t, 0.95*600.0/60, float64(st["api.test"].Limit), 1e-9, "the minute's pace")
		assert.EqualValues(t, 5, calls.Load())
	})
}
