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
// base answers at once with a canned response, with GitHub's headers or with
// IETF structured fields.
func BenchmarkTransportOverhead(b *testing.B) {
	date := time.Now().UTC().Format(http.TimeFormat)
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
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
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
