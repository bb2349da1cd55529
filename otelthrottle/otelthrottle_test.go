package otelthrottle

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-throttle/throttle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// collected is one collection of a ManualReader, looked up by instrument
// name and attributes.
type collected struct {
	t  *testing.T
	rm metricdata.ResourceMetrics
}

func collect(t *testing.T, r *sdkmetric.ManualReader) collected {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	return collected{t, rm}
}

func (c collected) metric(name string) (metricdata.Metrics, bool) {
	for _, sm := range c.rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m, true
			}
		}
	}
	return metricdata.Metrics{}, false
}

// attrString renders an attribute set as k=v,k=v in key order.
func attrString(s attribute.Set) string {
	var parts []string
	for _, kv := range s.ToSlice() {
		parts = append(parts, string(kv.Key)+"="+kv.Value.String())
	}
	return strings.Join(parts, ",")
}

// points returns the values of a counter or gauge by attribute set.
func (c collected) points(name string) map[string]float64 {
	c.t.Helper()
	m, ok := c.metric(name)
	if !ok {
		return nil
	}
	out := map[string]float64{}
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		addPoints(out, d.DataPoints)
	case metricdata.Sum[float64]:
		addPoints(out, d.DataPoints)
	case metricdata.Gauge[int64]:
		addPoints(out, d.DataPoints)
	case metricdata.Gauge[float64]:
		addPoints(out, d.DataPoints)
	default:
		c.t.Fatalf("%s: unexpected data %T", name, m.Data)
	}
	return out
}

func addPoints[N int64 | float64](out map[string]float64, dps []metricdata.DataPoint[N]) {
	for _, p := range dps {
		out[attrString(p.Attributes)] = float64(p.Value)
	}
}

// hist is a histogram point: count and sum.
type hist struct {
	Count uint64
	Sum   float64
}

func (c collected) histograms(name string) map[string]hist {
	c.t.Helper()
	m, ok := c.metric(name)
	if !ok {
		return nil
	}
	d, ok := m.Data.(metricdata.Histogram[float64])
	require.True(c.t, ok, "%s: data %T, want a float64 histogram", name, m.Data)
	out := map[string]hist{}
	for _, p := range d.DataPoints {
		out[attrString(p.Attributes)] = hist{p.Count, p.Sum}
	}
	return out
}

// spanEvents returns the events of the ended span named name, each as
// "event: k=v,..." with the attributes in key order.
func spanEvents(t *testing.T, sr *tracetest.SpanRecorder, name string) []string {
	t.Helper()
	for _, s := range sr.Ended() {
		if s.Name() != name {
			continue
		}
		var out []string
		for _, e := range s.Events() {
			out = append(out, e.Name+": "+attrString(attribute.NewSet(e.Attributes...)))
		}
		return out
	}
	t.Fatalf("no ended span %q", name)
	return nil
}

// TestBucketScenario runs a scripted scenario on a wired bucket and checks
// every count, the waits and the span events exactly.
func TestBucketScenario(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		sr := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
		tracer := tp.Tracer("test")

		b, tel, err := NewBucket(throttle.Config{Name: "api", Limit: 10, Burst: 1, MaxQueue: 1, MaxWait: 10 * time.Second}, mp)
		require.NoError(t, err)
		defer tel.Close()
		bg := context.Background()
		var wg sync.WaitGroup
		spanned := func(name string, f func(ctx context.Context) error) chan error {
			done := make(chan error, 1)
			wg.Go(func() {
				ctx, span := tracer.Start(bg, name)
				done <- f(ctx)
				span.End()
			})
			synctest.Wait()
			return done
		}

		// t=0: one admitted at once; A queues behind it for 100 ms; the
		// queue (MaxQueue 1) is then full, and 5 tokens exceed the burst.
		require.True(t, b.Allow())
		a := spanned("A", b.Wait)
		require.ErrorIs(t, b.Wait(bg), throttle.ErrQueueFull)
		require.ErrorIs(t, b.WaitN(bg, 5), throttle.ErrExceedsBurst)
		require.NoError(t, <-a)

		// t=0.2 s: C is admitted at once and answered by a 429 with
		// Retry-After: 5 s, a cooldown until t=5.2 s.
		time.Sleep(100 * time.Millisecond)
		require.NoError(t, <-spanned("C", func(ctx context.Context) error {
			f, err := b.Begin(ctx)
			if err == nil {
				f.DoneQuota(http.StatusTooManyRequests, throttle.Quota{Limit: -1, Remaining: -1, RetryAfter: 5 * time.Second})
			}
			return err
		}))
		// A caller whose deadline comes before the cooldown's end is
		// refused at once; E waits through the cooldown.
		dctx, cancel := context.WithTimeout(bg, time.Second)
		require.ErrorIs(t, b.Wait(dctx), throttle.ErrWaitTooLong)
		cancel()
		e := spanned("E", b.Wait)

		c := collect(t, reader)
		assert.Equal(t, map[string]float64{"throttle.key=api": 1}, c.points("throttle.queue.length"), "E queued")
		assert.Equal(t, map[string]float64{"throttle.key=api": 5}, c.points("throttle.cooldown.remaining"))

		require.NoError(t, <-e)
		// t=5.2 s: E went first after the cooldown, as the probe; F waits
		// for its answer and gives up after 50 ms.
		require.ErrorIs(t, <-spanned("F", func(ctx context.Context) error {
			ctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(50*time.Millisecond, cancel)
			return b.Wait(ctx)
		}), context.Canceled)
		wg.Wait()

		c = collect(t, reader)
		assert.Equal(t, map[string]float64{
			"throttle.key=api,throttle.outcome=admitted":                              4, // Allow, A, C, E
			"throttle.key=api,throttle.outcome=canceled":                              1, // F
			"throttle.key=api,throttle.outcome=refused,throttle.reason=queue_full":    1,
			"throttle.key=api,throttle.outcome=refused,throttle.reason=wait_too_long": 1,
			"throttle.key=api,throttle.outcome=refused,throttle.reason=exceeds_burst": 1,
		}, c.points("throttle.requests"))
		assert.Equal(t, map[string]float64{"throttle.key=api": 1}, c.points("throttle.cooldowns"))
		assert.Equal(t, map[string]float64{"throttle.key=api": 0}, c.points("throttle.queue.length"))
		assert.Equal(t, map[string]float64{"throttle.key=api": 0}, c.points("throttle.cooldown.remaining"))
		// The 429 cut the rate (the model's slow start): the gauge follows.
		assert.Equal(t, map[string]float64{"throttle.key=api": float64(b.Stats().Limit)}, c.points("throttle.limit"))
		assert.Empty(t, c.points("throttle.server.limit"), "the server stated no quota")
		assert.Equal(t, map[string]hist{
			"throttle.key=api,throttle.outcome=admitted,throttle.reason=rate":     {1, 0.1},
			"throttle.key=api,throttle.outcome=admitted,throttle.reason=cooldown": {1, 5},
			"throttle.key=api,throttle.outcome=canceled,throttle.reason=learning": {1, 0.05},
		}, roundHist(c.histograms("throttle.wait.duration")))
		assert.Equal(t, map[string]hist{
			"throttle.key=api,throttle.reason=retry_after": {1, 5},
		}, roundHist(c.histograms("throttle.cooldown.duration")))

		assert.Equal(t, []string{
			"throttle.wait: throttle.key=api,throttle.outcome=admitted,throttle.reason=rate,throttle.wait.actual=0.1,throttle.wait.predicted=0.1",
		}, spanEvents(t, sr, "A"))
		until := time.Now().Add(-50 * time.Millisecond).UTC().Format(time.RFC3339Nano)
		assert.Equal(t, []string{
			"throttle.cooldown: http.response.status_code=429,throttle.cooldown.duration=5,throttle.cooldown.until=" + until + ",throttle.key=api,throttle.reason=retry_after",
		}, spanEvents(t, sr, "C"))
		assert.Equal(t, []string{
			"throttle.wait: throttle.key=api,throttle.outcome=admitted,throttle.reason=cooldown,throttle.wait.actual=5,throttle.wait.predicted=5",
		}, spanEvents(t, sr, "E"))
		assert.Equal(t, []string{
			"throttle.wait: throttle.key=api,throttle.outcome=canceled,throttle.reason=learning,throttle.wait.actual=0.05,throttle.wait.predicted=0",
		}, spanEvents(t, sr, "F"))
		require.NoError(t, tp.Shutdown(bg))
		require.NoError(t, mp.Shutdown(bg))
	})
}

// roundHist rounds sums to the microsecond, which float seconds may miss.
func roundHist(m map[string]hist) map[string]hist {
	for k, h := range m {
		h.Sum = float64(time.Duration(h.Sum*1e9).Round(time.Microsecond)) / 1e9
		m[k] = h
	}
	return m
}

// TestTransport wires a Transport whose server names a scope and states
// its quota, and checks the key and scope attributes and the server gauges.
func TestTransport(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	var remaining = 60
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		remaining--
		h := http.Header{}
		h.Set("X-RateLimit-Limit", "5000")
		h.Set("X-RateLimit-Remaining", fmt.Sprint(remaining))
		h.Set("X-RateLimit-Reset", fmt.Sprint(time.Now().Add(time.Hour).Unix()))
		h.Set("X-RateLimit-Resource", strings.Trim(r.URL.Path, "/"))
		return &http.Response{StatusCode: 200, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	})
	tr := &throttle.Transport{Base: base, Config: throttle.Config{Limit: 1000}}
	tel, err := Instrument(tr, mp)
	require.NoError(t, err)
	defer tel.Close()
	for _, path := range []string{"/core", "/core", "/search"} {
		req, _ := http.NewRequest("GET", "http://api.test"+path, nil)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	c := collect(t, reader)
	// The first answer names the scope core: from then on the route
	// /core has its own bucket; /search's first answer moves it to
	// search.
	assert.Equal(t, map[string]float64{
		"throttle.key=api.test,throttle.scope=core":   58,
		"throttle.key=api.test,throttle.scope=search": 57,
	}, c.points("throttle.server.remaining"))
	assert.Equal(t, 3.0, sum(c.points("throttle.requests")), "every request counted once")
	assert.Equal(t, map[string]float64{
		"throttle.key=api.test,throttle.scope=core":   5000,
		"throttle.key=api.test,throttle.scope=search": 5000,
	}, c.points("throttle.server.limit"))
	_, err = Instrument(tr, mp)
	assert.ErrorContains(t, err, "before its first request")
}

func sum(m map[string]float64) float64 {
	var s float64
	for _, v := range m {
		s += v
	}
	return s
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// splitCases are split's table, and FuzzSplit's seeds.
var splitCases = []struct{ name, key, scope string }{
	{"api.github.com", "api.github.com", ""},
	{"api.github.com#search", "api.github.com", "search"},
	{`h\#core`, "h#core", ""},
	{`h\#core#x`, "h#core", "x"},
	{`a\\b#c#d`, `a\b`, "c#d"},
	{`trailing\`, `trailing\`, ""},
}

func TestSplit(t *testing.T) {
	for _, tc := range splitCases {
		key, scope := split(tc.name)
		assert.Equal(t, []string{tc.key, tc.scope}, []string{key, scope}, "split(%q)", tc.name)
	}
}

// TestChain: hooks already in Config.Trace are kept, and called first.
func TestChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		var mine []throttle.WaitInfo
		var answers int
		own := &throttle.Trace{
			Waited:   func(_ context.Context, w throttle.WaitInfo) { mine = append(mine, w) },
			Answered: func(context.Context, throttle.AnswerInfo) { answers++ },
		}
		b, tel, err := NewBucket(throttle.Config{Name: "x", Limit: 1, Burst: 1, Trace: own}, mp)
		require.NoError(t, err)
		defer tel.Close()
		require.True(t, b.Allow())
		require.NoError(t, b.Wait(context.Background()))
		b.ObserveQuota(http.StatusOK, throttle.Quota{Limit: 50, Remaining: 10})
		require.Len(t, mine, 1)
		assert.Equal(t, time.Second, mine[0].Waited)
		assert.Equal(t, 1, answers)
		c := collect(t, reader)
		assert.Equal(t, map[string]hist{"throttle.key=x,throttle.outcome=admitted,throttle.reason=rate": {1, 1}},
			c.histograms("throttle.wait.duration"))
		assert.Equal(t, map[string]float64{"throttle.key=x": 10}, c.points("throttle.server.remaining"))
		require.NoError(t, mp.Shutdown(context.Background()))
	})
}
