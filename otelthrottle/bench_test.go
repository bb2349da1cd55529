package otelthrottle

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-throttle/throttle"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// BenchmarkTransport is a Transport's cost per request over a base that
// answers at once with GitHub's headers and ample quota, not wired and
// wired to an SDK MeterProvider: the difference is what the module costs
// per request (the Answered hook; the observable instruments cost nothing
// until a reader collects).
func BenchmarkTransport(b *testing.B) {
	h := http.Header{}
	h.Set("X-RateLimit-Limit", "1000000000000")
	h.Set("X-RateLimit-Remaining", "999999999999")
	h.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	})
	for _, wired := range []bool{false, true} {
		b.Run("wired="+strconv.FormatBool(wired), func(b *testing.B) {
			tr := &throttle.Transport{Base: base, Config: throttle.Config{Limit: 1e9}}
			if wired {
				mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
				defer mp.Shutdown(context.Background())
				tel, err := Instrument(tr, mp)
				if err != nil {
					b.Fatal(err)
				}
				defer tel.Close()
			}
			req, _ := http.NewRequest("GET", "http://api.test/x", nil)
			b.ReportAllocs()
			for b.Loop() {
				resp, err := tr.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
			}
		})
	}
}

// BenchmarkWaited is the module's cost per queued wait: the Waited hook
// (histogram and, with a recording span, a span event), on top of a wait
// that lasts at least as long as the bucket's interval.
func BenchmarkWaited(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer mp.Shutdown(context.Background())
	tel, err := newTelemetry(mp)
	if err != nil {
		b.Fatal(err)
	}
	w := throttle.WaitInfo{Name: "api.test", N: 1, Reason: throttle.WaitRate, Predicted: 10 * time.Millisecond, Waited: 10 * time.Millisecond}
	b.Run("span=none", func(b *testing.B) {
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			tel.waited(ctx, w)
		}
	})
	// A span per wait, started and ended: the difference between the
	// two is the span event's cost.
	for _, hook := range []bool{false, true} {
		b.Run("span=recording/hook="+strconv.FormatBool(hook), func(b *testing.B) {
			// No processor: the spans record and are dropped once ended.
			tp := sdktrace.NewTracerProvider()
			defer tp.Shutdown(context.Background())
			tracer := tp.Tracer("bench")
			b.ReportAllocs()
			for b.Loop() {
				ctx, span := tracer.Start(context.Background(), "request")
				if !span.IsRecording() {
					b.Fatal("span not recording")
				}
				if hook {
					tel.waited(ctx, w)
				}
				span.End()
			}
		})
	}
}
