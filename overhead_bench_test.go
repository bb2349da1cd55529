package throttle

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkTransportOverhead is the Transport's own cost per request: the
// base answers at once with a canned GitHub response.
func BenchmarkTransportOverhead(b *testing.B) {
	h := http.Header{}
	h.Set("X-RateLimit-Limit", "1000000000000")
	h.Set("X-RateLimit-Remaining", "999999999999")
	h.Set("X-RateLimit-Used", "1")
	h.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	h.Set("Content-Type", "application/json")
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	})
	tr := &Transport{Base: base, Config: Config{Limit: 1e9}}
	req, _ := http.NewRequest("GET", "http://api.test/x", nil)
	b.ReportAllocs()
	for b.Loop() {
		resp, err := tr.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
}
