package throttle

// Tests from a review of Meters and MaxInFlight: all but the first failed
// on the code before the fixes they came with.

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A retried request with Meters ends every flight of each attempt.
func TestRegressRetriesMeters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := refusedOnce("1")
		tr := &Transport{Base: base, Retries: 2, Config: Config{Limit: 10, Burst: 10, MaxInFlight: 1},
			Meters: []Meter{{Unit: "tokens", Config: Config{Limit: 10, Burst: 10, MaxInFlight: 1}}}}
		start := time.Now()
		resp, err := get(t, tr, context.Background())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, time.Second, time.Since(start), "retried after the cooldown")
		for k, st := range tr.Stats().Keys {
			assert.Equal(t, 0, st.InFlight, k)
			assert.EqualValues(t, 2, st.Admitted, k)
		}
	})
}

// A cap that frees within a nanosecond wakes the gate's head then, not at
// an answer or its deadline.
func TestRegressCapRoundingLostWakeup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 1000, Burst: 1000, MaxWait: 5 * time.Second})
		g := newGate()
		b.kick = g.kick
		b.mu.Lock()
		now := b.ownLocked()
		b.capAt, b.capGrow, b.capEnd = now, 1e-7, now+1e10
		b.capBase = float64(b.count()) + 1 - 5e-8
		b.releaseLocked(now)
		b.mu.Unlock()
		start := time.Now()
		fs, err := g.begin(context.Background(), []*Bucket{b}, []int{1}, b.now())
		require.NoError(t, err)
		assert.Len(t, fs, 1)
		assert.LessOrEqual(t, time.Since(start), time.Millisecond, "a cap that frees in a nanosecond")
	})
}

// A cost asked while the bucket was learning, above the default burst it
// learns afterwards, is served (the burst grows to hold it), with Meters or
// without.
func TestRegressLearnedBurstBelowCost(t *testing.T) {
	for _, meters := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				time.Sleep(100 * time.Millisecond)
				h := http.Header{}
				h.Set("X-Ratelimit-Limit-Tokens", "600")
				h.Set("X-Ratelimit-Remaining-Tokens", "599")
				h.Set("X-Ratelimit-Reset-Tokens", "60s")
				h.Set("X-Ratelimit-Limit-Requests", "1000")
				h.Set("X-Ratelimit-Remaining-Requests", "999")
				h.Set("X-Ratelimit-Reset-Requests", "60s")
				return newResponse(r, http.StatusOK, h, "ok"), nil
			})
			tr := &Transport{Base: base, Unit: "tokens", Config: Config{}}
			if meters {
				tr.Meters = []Meter{{Unit: "requests", Config: Config{Limit: 1000, Burst: 1000}}}
			}
			costs := []int{1, 300, 1}
			answered, errs := sendCosts(t, tr, costs)
			for i, err := range errs {
				assert.NoError(t, err, "meters=%v: request %d of cost %d, after %v", meters, i, costs[i], answered[i])
			}
			assert.GreaterOrEqual(t, tr.Stats().Keys["api.test"].Burst, 300, "meters=%v", meters)
		})
	}
}

// A flight of cost 0 is held by MaxInFlight as any other.
func TestRegressZeroCostHeldByMaxInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 100, Burst: 100, MaxInFlight: 1})
		f1, err := b.Begin(context.Background())
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err = b.BeginN(ctx, 0)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "held until the deadline")
		assert.Equal(t, 1, b.Stats().InFlight)
		f1.Done(nil)
		f0, err := b.BeginN(context.Background(), 0)
		assert.NoError(t, err, "the slot is free")
		f0.Done(nil)
		assert.Equal(t, 0, b.Stats().InFlight)
	})
}

// A slow wait emits EventWait, with Meters or without.
func TestRegressGateWaitEvent(t *testing.T) {
	for _, meters := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			var sent, waits atomic.Int64
			tr := &Transport{Base: okBase(&sent), Config: Config{Limit: 0.5, Burst: 1, OnEvent: func(e Event) {
				if e.Kind == EventWait {
					waits.Add(1)
				}
			}}}
			if meters {
				tr.Meters = []Meter{{Unit: "tokens", Config: Config{Limit: 1000, Burst: 1000}}}
			}
			sendInTurn(t, tr, background(2)...)
			assert.EqualValues(t, 1, waits.Load(), "meters=%v: a 2 s wait", meters)
			assert.EqualValues(t, 1, tr.Stats().Keys["api.test"].Waited, "meters=%v", meters)
		})
	}
}

// A waiter held by MaxInFlight is refused at its deadline with a message
// that says what it waited for, with Meters or without.
func TestRegressFlightRefusalMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			time.Sleep(10 * time.Second)
			return newResponse(r, http.StatusOK, nil, "ok"), nil
		})
		for _, meters := range []bool{false, true} {
			tr := &Transport{Base: base, Config: Config{Limit: 100, Burst: 100, MaxInFlight: 1, MaxWait: time.Second}}
			if meters {
				tr.Meters = []Meter{{Unit: "tokens", Config: Config{Limit: 1000, Burst: 1000}}}
			}
			var wg sync.WaitGroup
			wg.Go(func() {
				resp, err := get(t, tr, context.Background())
				if err == nil {
					resp.Body.Close()
				}
			})
			synctest.Wait()
			start := time.Now()
			_, err := get(t, tr, context.Background())
			assert.ErrorIs(t, err, ErrWaitTooLong, "meters=%v", meters)
			assert.ErrorContains(t, err, "not served within 1s: waiting for an answer", "meters=%v", meters)
			assert.Equal(t, time.Second, time.Since(start), "meters=%v: at MaxWait", meters)
			wg.Wait()
		}
	})
}

// Refuse429 answers a Meter's bad cost as it does the key's.
func TestRegressRefuse429MeterBadCost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int64
		tr := &Transport{Base: okBase(&sent), Refusal: Refuse429, Config: Config{Limit: 10, Burst: 10},
			Meters: []Meter{{Unit: "tokens", Cost: func(*http.Request) int { return -1 }}}}
		resp, err := get(t, tr, context.Background())
		require.NoError(t, err)
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		assert.Equal(t, "bad-cost", resp.Header.Get(RefusedHeader))
		assert.Zero(t, sent.Load(), "not sent")
	})
}

// After a cooldown, with the probe out and slow, the gate's head waits for
// the key bucket's tokens too once the probe is given up for lost: nothing
// goes out without its tokens.
func TestRegressProbeLostTakesTokens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int64
		var mu sync.Mutex
		var sentAt []time.Duration
		start := time.Now()
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			n := calls.Add(1)
			mu.Lock()
			sentAt = append(sentAt, time.Since(start))
			mu.Unlock()
			if n == 1 {
				h := http.Header{}
				h.Set("Retry-After", "1")
				return newResponse(r, http.StatusTooManyRequests, h, ""), nil
			}
			if n == 2 {
				time.Sleep(5 * time.Second) // the probe is slow
			}
			return newResponse(r, http.StatusOK, nil, "ok"), nil
		})
		tr := &Transport{Base: base, Config: Config{Limit: 1, Burst: 1}, Unit: "tokens",
			Meters: []Meter{{Unit: "requests", Config: Config{Limit: 1000, Burst: 1000}}}}
		resp, err := get(t, tr, context.Background())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		time.Sleep(time.Second) // the cooldown's end
		sendInTurn(t, tr, background(3)...)
		assert.Len(t, sentAt, 4)
		assert.EqualValues(t, 4, tr.Stats().Keys["api.test"].Admitted, "every request sent took its token")
		for i := 2; i < len(sentAt); i++ {
			if sentAt[i]-sentAt[i-1] < 900*time.Millisecond {
				t.Errorf("requests %d and %d sent %v apart at 1/s burst 1", i-1, i, sentAt[i]-sentAt[i-1])
			}
		}
	})
}

// A request admitted by the host's bucket while the first answer names the
// scope moves to the scope's bucket; its Meter is charged once.
func TestRegressScopeSwitchChargesMeterOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int64
		start := time.Now()
		var mu sync.Mutex
		var at []time.Duration
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sent.Add(1)
			mu.Lock()
			at = append(at, time.Since(start))
			mu.Unlock()
			time.Sleep(50 * time.Millisecond)
			h := http.Header{}
			h.Set("X-RateLimit-Resource", "core")
			return newResponse(r, http.StatusOK, h, "ok"), nil
		})
		tr := &Transport{Base: base, Config: Config{Limit: 1000, Burst: 1000},
			Meters: []Meter{{Unit: "tokens", Config: Config{Limit: 10, Burst: 1}}}}
		_, errs := sendInTurn(t, tr, background(2)...)
		for _, err := range errs {
			assert.NoError(t, err)
		}
		st := tr.Stats().Keys["api.test##tokens"]
		if st.Admitted != uint64(sent.Load()) {
			t.Errorf("meter admitted %d for %d requests sent", st.Admitted, sent.Load())
		}
	})
}

// Refuse429 with Meters: Retry-After is the wait in the key's queue, over
// every quota.
func TestRegressRefuse429RetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int64
		tr := &Transport{Base: okBase(&sent), Config: Config{Limit: 1000, Burst: 1000, MaxWait: 2 * time.Second},
			Refusal: Refuse429,
			Meters:  []Meter{{Unit: "tokens", Config: Config{Limit: 1, Burst: 1}}}}
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				resp, err := get(t, tr, context.Background())
				if err == nil {
					resp.Body.Close()
				}
			})
			synctest.Wait()
		}
		resp, err := get(t, tr, context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ra, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		assert.Equal(t, "wait-too-long", resp.Header.Get(RefusedHeader))
		assert.Equal(t, 3, ra, "three requests ahead at 1/s")
		wg.Wait()
	})
}

// A cost beyond what the rate could ever bring within MaxWait is refused,
// and does not raise the default burst.
func TestRegressRefusedCostBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 10})
		err := b.WaitN(context.Background(), 1_000_000)
		assert.ErrorIs(t, err, ErrExceedsBurst, "10/s brings 600 in MaxWait")
		assert.Equal(t, 10, b.Burst())
		time.Sleep(24 * time.Hour)
		n := 0
		for b.Allow() {
			n++
			if n > 100000 {
				break
			}
		}
		if n > 10 {
			t.Errorf("after a refused WaitN, %d Allows pass at once at 10/s default burst", n)
		}
	})
}

// A Meter's event hook that panics while the answer is folded in leaves
// no flight behind.
func TestRegressPanicEndsFlights(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			h.Set("Retry-After", "1")
			return newResponse(r, http.StatusTooManyRequests, h, ""), nil
		})
		tr := &Transport{Base: base, Config: Config{Limit: 10, Burst: 10},
			Meters: []Meter{{Unit: "tokens", Config: Config{Limit: 10, Burst: 10, OnEvent: func(e Event) {
				if e.Kind == EventCooldown {
					panic("hook")
				}
			}}}}}
		func() {
			defer func() { recover() }()
			get(t, tr, context.Background())
		}()
		st := tr.Stats().Keys["api.test"]
		if st.InFlight != 0 {
			t.Errorf("key bucket InFlight %d after the request ended", st.InFlight)
		}
	})
}

// With Meters, a server-named scope has its own queue and Meters: one
// scope's cooldown does not hold the other's requests.
func TestRegressScopesOwnQueues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int64
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			scope := "core"
			if r.URL.Path == "/search/x" {
				scope = "search"
			}
			h.Set("X-RateLimit-Resource", scope)
			if calls.Add(1) == 3 { // core's second: 429
				h.Set("Retry-After", "30")
				return newResponse(r, http.StatusTooManyRequests, h, ""), nil
			}
			return newResponse(r, http.StatusOK, h, "ok"), nil
		})
		tr := &Transport{Base: base, Config: Config{Limit: 1000, Burst: 1000},
			Meters: []Meter{{Unit: "tokens", Config: Config{Limit: 1000, Burst: 1000}}}}
		do := func(path string) time.Duration {
			start := time.Now()
			req, _ := http.NewRequest("GET", "http://api.test"+path, nil)
			resp, err := tr.RoundTrip(req)
			if assert.NoError(t, err, path) {
				resp.Body.Close()
			}
			return time.Since(start)
		}
		do("/core/x")
		do("/search/x")
		do("/core/x") // 429: core cools down for 30 s
		done := make(chan time.Duration)
		go func() { done <- do("/core/x") }()
		synctest.Wait()
		assert.Zero(t, do("/search/x"), "search is not held by core's cooldown")
		assert.Equal(t, 30*time.Second, <-done, "core is")
		keys := tr.Stats().Keys
		for _, k := range []string{"api.test", "api.test##tokens", "api.test#core", "api.test#core##tokens", "api.test#search", "api.test#search##tokens"} {
			assert.Contains(t, keys, k)
		}
		assert.EqualValues(t, 2, keys["api.test#core##tokens"].Admitted, "core's requests once its scope was known")
		assert.EqualValues(t, 2, keys["api.test##tokens"].Admitted, "the first of each scope, before it was known")
	})
}

// A retry after an answer that named the route's scope goes through the
// scope's queue and Meters, not the host's.
func TestRegressRetryMovesToScopeMeters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int64
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			h.Set("X-RateLimit-Resource", "core")
			if calls.Add(1) == 1 {
				h.Set("Retry-After", "1")
				return newResponse(r, http.StatusTooManyRequests, h, ""), nil
			}
			return newResponse(r, http.StatusOK, h, "ok"), nil
		})
		tr := &Transport{Base: base, Retries: 1, Config: Config{Limit: 100, Burst: 100},
			Meters: []Meter{{Unit: "tokens", Config: Config{Limit: 100, Burst: 100}}}}
		start := time.Now()
		resp, err := get(t, tr, context.Background())
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, time.Second, time.Since(start), "retried after the scope's cooldown")
		keys := tr.Stats().Keys
		assert.EqualValues(t, 1, keys["api.test##tokens"].Admitted, "the first attempt")
		assert.EqualValues(t, 1, keys["api.test#core##tokens"].Admitted, "the retry")
		for k, st := range keys {
			assert.Equal(t, 0, st.InFlight, k)
		}
	})
}
