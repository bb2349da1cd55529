package throttle

import (
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// overheadResponses are the canned responses of the overhead benchmarks:
// GitHub's headers and IETF structured fields, with ample quota.
func overheadResponses() []struct {
	name   string
	header http.Header
} {
	date := time.Now().UTC().Format(http.TimeFormat)
	var out []struct {
		name   string
		header http.Header
	}
	for _, d := range []struct {
		name    string
		headers []string
	}{
		{"github", []string{
			"X-RateLimit-Limit", "1000000000000", "X-RateLimit-Remaining", "999999999999",
			"X-RateLimit-Used", "1", "X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10),
			"X-RateLimit-Resource", "core", "Date", date, "Content-Type", "application/json",
		}},
		{"ietf-structured", []string{
			"RateLimit", `"default";r=999999999999;t=60`, "RateLimit-Policy", `"default";q=1000000000000;w=60`,
			"Date", date, "Content-Type", "text/plain; charset=utf-8", "Content-Length", "2",
		}},
	} {
		h := http.Header{}
		for i := 0; i < len(d.headers); i += 2 {
			h.Set(d.headers[i], d.headers[i+1])
		}
		out = append(out, struct {
			name   string
			header http.Header
		}{d.name, h})
	}
	return out
}

// BenchmarkTransportOverhead is the Transport's own cost per request: the
// base answers at once with a canned response.
func BenchmarkTransportOverhead(b *testing.B) {
	for _, d := range overheadResponses() {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: d.header, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
		})
		tr := &Transport{Base: base, Config: Config{Limit: 1e9}}
		req, _ := http.NewRequest("GET", "http://api.test/x", nil)
		b.Run("headers="+d.name, func(b *testing.B) {
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

// BenchmarkTransportOverheadCold is BenchmarkTransportOverhead with the
// caches flushed before each request (8 MiB written), as a real round trip
// flushes them with the network stack's code and data: the metric cold-ns
// is the median time of a Transport's RoundTrip over an instant base, and
// base-ns that of the base alone, flushed the same way. The response's
// headers are read once after the flush, as a response just read from the
// connection would be in the cache.
func BenchmarkTransportOverheadCold(b *testing.B) {
	flush := make([]uint64, 8<<20/8)
	var sink uint64
	cold := func(h http.Header) {
		for i := 0; i < len(flush); i += 8 { // a word per cache line
			flush[i]++
			sink += flush[i]
		}
		for k, v := range h {
			sink += uint64(k[0]) + uint64(len(v[0]))
		}
	}
	for _, d := range overheadResponses() {
		resp := &http.Response{StatusCode: 200, Header: d.header, Body: http.NoBody}
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) { return resp, nil })
		tr := &Transport{Base: base, Config: Config{Limit: 1e9}}
		req, _ := http.NewRequest("GET", "http://api.test/x", nil)
		b.Run("headers="+d.name, func(b *testing.B) {
			var ts, bs []time.Duration
			for b.Loop() {
				cold(d.header)
				start := time.Now()
				_, _ = base.RoundTrip(req)
				bs = append(bs, time.Since(start))
				cold(d.header)
				start = time.Now()
				if _, err := tr.RoundTrip(req); err != nil {
					b.Fatal(err)
				}
				ts = append(ts, time.Since(start))
			}
			median := func(ds []time.Duration) float64 {
				slices.Sort(ds)
				return float64(ds[len(ds)/2])
			}
			b.ReportMetric(median(ts), "cold-ns")
			b.ReportMetric(median(bs), "base-ns")
		})
	}
	_ = sink
}
