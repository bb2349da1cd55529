package throttle

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-throttle/throttle/throttletest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// trackedBody records whether it was closed and how much was read.
type trackedBody struct {
	io.Reader
	closed atomic.Bool
	read   atomic.Int64
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	b.read.Add(int64(n))
	return n, err
}
func (b *trackedBody) Close() error { b.closed.Store(true); return nil }

func newResponse(req *http.Request, status int, h http.Header, body string) *http.Response {
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{StatusCode: status, Header: h, Body: &trackedBody{Reader: strings.NewReader(body)}, Request: req}
}

func TestTransportContract(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Body != nil {
				r.Body.Close()
			}
			h := http.Header{}
			h.Set("Retry-After", "2")
			return newResponse(r, http.StatusTooManyRequests, h, "slow down"), nil
		})}
		req, err := http.NewRequestWithContext(t.Context(), "POST", "http://api.test/v1/items?x=1", strings.NewReader("body"))
		require.NoError(t, err)
		req.Header.Set("X-Mine", "1")
		before := req.Clone(t.Context())

		resp, err := tr.RoundTrip(req)
		require.NoError(t, err, "a 429 is a response, not an error")
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		assert.False(t, resp.Body.(*trackedBody).closed.Load(), "the caller's response body is left to the caller")
		assert.Equal(t, before.Header, req.Header, "request headers untouched")
		assert.Equal(t, before.URL, req.URL, "request URL untouched")
		assert.Equal(t, before.Method, req.Method)

		start := time.Now()
		_, err = tr.RoundTrip(req.Clone(t.Context()))
		require.NoError(t, err)
		assert.Equal(t, 2*time.Second, time.Since(start), "the 429 put the host into a cooldown")
	})
}

func TestTransportZeroValueLearns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := throttletest.NewHandler(throttletest.Config{Quota: throttletest.Quota{Limit: 5, Window: time.Second}, Dialect: throttletest.IETF})
		client := &http.Client{Transport: &Transport{Base: srv}}
		for range 20 {
			resp, err := client.Get("http://api.test/")
			require.NoError(t, err)
			resp.Body.Close()
		}
		assert.Equal(t, 0, srv.Stats().Refused, "zero-config transport: no 429")
		assert.Equal(t, 20, srv.Stats().Admitted)
	})
}

func TestTransportEmptyKeyPassesThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent int
		tr := &Transport{
			Base:   roundTripFunc(func(r *http.Request) (*http.Response, error) { sent++; return newResponse(r, 429, nil, ""), nil }),
			Config: Config{Limit: 1, Burst: 1, MaxQueue: -1},
			Key:    func(*http.Request) string { return "" },
		}
		for range 5 {
			req, _ := http.NewRequest("GET", "http://api.test/health", nil)
			_, err := tr.RoundTrip(req)
			require.NoError(t, err)
		}
		assert.Equal(t, 5, sent)
		assert.Empty(t, tr.Stats().Keys, "no bucket for an empty key")
	})
}

func TestTransportRefusalThroughClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{
			Base:   roundTripFunc(func(r *http.Request) (*http.Response, error) { return newResponse(r, 200, nil, "ok"), nil }),
			Config: Config{Limit: 1, Burst: 1, MaxQueue: -1},
		}
		client := &http.Client{Transport: tr}
		resp, err := client.Get("http://api.test/")
		require.NoError(t, err)
		resp.Body.Close()

		body := &trackedBody{Reader: strings.NewReader("payload")}
		req, _ := http.NewRequest("POST", "http://api.test/", body)
		_, err = client.Do(req)
		require.ErrorIs(t, err, ErrQueueFull)
		var ue *url.Error
		require.ErrorAs(t, err, &ue)
		var re *RefusedError
		require.ErrorAs(t, err, &re)
		assert.Equal(t, "api.test", re.Key)
		assert.Contains(t, err.Error(), "throttle: api.test: queue full")
		assert.True(t, body.closed.Load(), "the body of a refused request is closed")

		tr.Config.MaxQueue = 0 // new keys queue; MaxWait decides
		tr.Config.MaxWait = 500 * time.Millisecond
		_, err = client.Get("http://other.test/")
		require.NoError(t, err)
		_, err = client.Get("http://other.test/")
		require.ErrorIs(t, err, ErrWaitTooLong)
		assert.Contains(t, err.Error(), "other.test")
	})
}

func TestTransportErrorEndsFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("connection reset")
		tr := &Transport{Base: roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, boom })}
		req, _ := http.NewRequest("GET", "http://api.test/", nil)
		_, err := tr.RoundTrip(req)
		require.ErrorIs(t, err, boom)
		st := tr.Stats().Keys["api.test"]
		assert.Equal(t, 0, st.InFlight)
		assert.True(t, st.Learning, "no answer: still learning, and the next request probes")
		_, err = tr.RoundTrip(req)
		require.ErrorIs(t, err, boom, "the next request was sent, not held")
	})
}

func TestTransportCancelWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{
			Base:   roundTripFunc(func(r *http.Request) (*http.Response, error) { return newResponse(r, 200, nil, ""), nil }),
			Config: Config{Limit: 0.1, Burst: 1},
		}
		req, _ := http.NewRequest("GET", "http://api.test/", nil)
		_, err := tr.RoundTrip(req)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		go func() { time.Sleep(time.Second); cancel() }()
		_, err = tr.RoundTrip(req.WithContext(ctx))
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, uint64(1), tr.Stats().Total.Canceled)
	})
}

func TestTransportRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls int
		var bodies []string
		var first *trackedBody
		tr := &Transport{
			Retries: 2,
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				calls++
				if r.Body != nil {
					b, _ := io.ReadAll(r.Body)
					r.Body.Close()
					bodies = append(bodies, string(b))
				}
				if calls == 1 {
					h := http.Header{}
					h.Set("Retry-After", "3")
					resp := newResponse(r, 429, h, strings.Repeat("x", 1000))
					first = resp.Body.(*trackedBody)
					return resp, nil
				}
				return newResponse(r, 200, nil, "ok"), nil
			}),
		}
		req, _ := http.NewRequestWithContext(t.Context(), "PUT", "http://api.test/x", bytes.NewReader([]byte("data")))
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		assert.Equal(t, 200, resp.StatusCode)
		assert.Equal(t, 3*time.Second, time.Since(start), "retried after the cooldown")
		assert.Equal(t, []string{"data", "data"}, bodies, "the body is replayed from GetBody")
		assert.True(t, first.closed.Load(), "the discarded response is closed")
		assert.Equal(t, int64(1000), first.read.Load(), "and drained, so the connection is reused")
	})
}

func TestTransportRetryNeedsReplayableBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls int
		tr := &Transport{Retries: 3, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calls++
			return newResponse(r, 429, nil, ""), nil
		})}
		req, _ := http.NewRequest("POST", "http://api.test/", io.NopCloser(strings.NewReader("once")))
		req.GetBody = nil
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		assert.Equal(t, 429, resp.StatusCode)
		assert.Equal(t, 1, calls, "a body that cannot be replayed is never sent twice")
	})
}

func TestTransportRetryRefusedReturnsResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls int
		tr := &Transport{Retries: 3, Config: Config{MaxWait: time.Second}, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calls++
			h := http.Header{}
			h.Set("Retry-After", "60")
			return newResponse(r, 429, h, "later"), nil
		})}
		req, _ := http.NewRequest("GET", "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err, "a retry the bucket refuses leaves the caller its response")
		assert.Equal(t, 429, resp.StatusCode)
		assert.False(t, resp.Body.(*trackedBody).closed.Load())
		assert.Equal(t, 1, calls)
	})
}

// TestTransportArrival: an answer is read against the clock at its
// arrival, as one reading of both clocks: a reset the server states as a
// delay and the same reset as an epoch without a Date (placed against the
// wall clock) hold the next request alike, after the answer took a while
// to come and after an hour of no requests.
func TestTransportArrival(t *testing.T) {
	waits := map[string]time.Duration{}
	for _, form := range []string{"delay", "epoch"} {
		synctest.Test(t, func(t *testing.T) {
			tr := &Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				time.Sleep(10 * time.Second) // a slow answer
				h := http.Header{}
				h.Set("X-RateLimit-Limit", "10")
				h.Set("X-RateLimit-Remaining", "0")
				reset := "30"
				if form == "epoch" {
					reset = strconv.FormatInt(time.Now().Add(30*time.Second).Unix(), 10)
				}
				h.Set("X-RateLimit-Reset", reset)
				return newResponse(r, 200, h, ""), nil
			})}
			get := func() {
				req, _ := http.NewRequest("GET", "http://api.test/x", nil)
				resp, err := tr.RoundTrip(req)
				require.NoError(t, err)
				resp.Body.Close()
			}
			get() // starts the clock
			time.Sleep(time.Hour)
			get() // spends the window: the next request waits for its reset
			start := time.Now()
			get()
			waits[form] = time.Since(start) - 10*time.Second
		})
	}
	assert.GreaterOrEqual(t, waits["delay"], 30*time.Second, "the next request waits for the reset 30 s after the answer")
	assert.Equal(t, waits["delay"], waits["epoch"], "a reset as an epoch without Date, and as a delay")
}

// TestTransportLoopback: 64 goroutines share one Transport against a real
// server on loopback. Real time: asserts bounds, not exact figures.
func TestTransportLoopback(t *testing.T) {
	srv := throttletest.NewTestServer(t, throttletest.Config{
		Quota:   throttletest.Quota{Limit: 50, Window: time.Second},
		Dialect: throttletest.IETFStructured,
	})
	tr := &Transport{Base: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer tr.Base.(*http.Transport).CloseIdleConnections()
	ctx, cancel := context.WithTimeout(t.Context(), 2500*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range 64 {
		wg.Go(func() {
			client := &http.Client{Transport: tr}
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/x", nil)
				resp, err := client.Do(req)
				if err != nil {
					if ctx.Err() == nil && !errors.Is(err, ErrWaitTooLong) {
						failed.Add(1)
						t.Errorf("unexpected error: %v", err)
					}
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	st := srv.Stats()
	t.Logf("server: %d admitted, %d refused", st.Admitted, st.Refused)
	// One-second windows with whole-second resets are the model's hardest
	// case (the reset's uncertainty is as long as the window): it measured
	// 0.5-4.5% refused here under -race, against the 2% it is aiming for.
	assert.LessOrEqual(t, st.Refused, st.Total()*6/100, "at most 6%% refused on loopback")
	// Real time under -race on a shared machine: a loose floor.
	assert.GreaterOrEqual(t, st.Admitted, 50, "at least a window's worth used")
	assert.Zero(t, failed.Load())
}

// BenchmarkRoundTrip compares a request through a Transport with ample quota
// to the same request through the bare base transport, on loopback, for a
// server sending GitHub's headers and one sending IETF structured fields.
func BenchmarkRoundTrip(b *testing.B) {
	dialects := []struct {
		name    string
		headers map[string]string
	}{
		{"github", map[string]string{
			"X-RateLimit-Limit": "1000000000000", "X-RateLimit-Remaining": "999999999999", "X-RateLimit-Used": "1",
			"X-RateLimit-Reset": strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10), "X-RateLimit-Resource": "core",
		}},
		{"ietf-structured", map[string]string{
			"RateLimit": `"default";r=999999999999;t=60`, "RateLimit-Policy": `"default";q=1000000000000;w=60`,
		}},
	}
	for _, d := range dialects {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for k, v := range d.headers {
				w.Header().Set(k, v)
			}
			_, _ = w.Write([]byte("ok"))
		}))
		base := &http.Transport{}
		run := func(b *testing.B, rt http.RoundTripper) {
			req, _ := http.NewRequest("GET", srv.URL+"/x", nil)
			b.ReportAllocs()
			for b.Loop() {
				resp, err := rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		tr := &Transport{Base: base, Config: Config{Limit: 1e9}}
		b.Run("headers="+d.name+"/impl=base", func(b *testing.B) { run(b, base) })
		b.Run("headers="+d.name+"/impl=throttle", func(b *testing.B) { run(b, tr) })
		// Paired: the base, a wrapper that does nothing but call it (the
		// control) and the Transport take turns request by request, in
		// rotating order, so that the machine's load falls on all three
		// alike. The metrics are the medians of each one's request times;
		// extra-% is the Transport's share over the base and control-% the
		// control's, which shows the run's noise floor: it should read 0.
		b.Run("headers="+d.name+"/impl=paired", func(b *testing.B) {
			req, _ := http.NewRequest("GET", srv.URL+"/x", nil)
			once := func(rt http.RoundTripper) time.Duration {
				start := time.Now()
				resp, err := rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return time.Since(start)
			}
			rts := [...]http.RoundTripper{base, roundTripFunc(base.RoundTrip), tr}
			var times [len(rts)][]time.Duration
			for i := 0; b.Loop(); i++ {
				for j := range rts {
					k := (i + j) % len(rts)
					times[k] = append(times[k], once(rts[k]))
				}
			}
			median := func(ts []time.Duration) float64 {
				slices.Sort(ts)
				return float64(ts[len(ts)/2])
			}
			mBase, mControl, mThrottle := median(times[0]), median(times[1]), median(times[2])
			b.ReportMetric(mBase, "base-ns/req")
			b.ReportMetric(mThrottle, "throttle-ns/req")
			b.ReportMetric(100*(mThrottle/mBase-1), "extra-%")
			b.ReportMetric(100*(mControl/mBase-1), "control-%")
		})
		base.CloseIdleConnections()
		srv.Close()
	}
}
