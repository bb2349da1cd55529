package throttle

import (
	"net/http"
	"strconv"
	"testing"
)

// BenchmarkTransportRoutes is a Transport's cost per request when requests
// take turns among several routes (first path segments of one host, and
// hosts): the lookup of a request's bucket must not fall back to the
// Transport's mutex when the route changes from one request to the next.
// paths=1 is the single-route case of BenchmarkTransportOverhead, without
// headers.
func BenchmarkTransportRoutes(b *testing.B) {
	// One canned response, so that the figures are the Transport's alone.
	resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody}
	base := roundTripFunc(func(*http.Request) (*http.Response, error) { return resp, nil })
	for _, c := range []struct {
		name string
		urls func(i int) string
	}{
		{"paths", func(i int) string { return "http://api.test/p" + strconv.Itoa(i) + "/x" }},
		{"hosts", func(i int) string { return "http://h" + strconv.Itoa(i) + ".test/x" }},
	} {
		for _, n := range []int{1, 2, 8} {
			b.Run(c.name+"="+strconv.Itoa(n), func(b *testing.B) {
				tr := &Transport{Base: base, Config: Config{Limit: 1e9}}
				reqs := make([]*http.Request, n)
				for i := range reqs {
					reqs[i], _ = http.NewRequest("GET", c.urls(i), nil)
				}
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if _, err := tr.RoundTrip(reqs[i%n]); err != nil {
						b.Fatal(err)
					}
				}
			})
			if c.name == "hosts" {
				continue
			}
			b.Run(c.name+"="+strconv.Itoa(n)+"/parallel", func(b *testing.B) {
				tr := &Transport{Base: base, Config: Config{Limit: 1e9}}
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					reqs := make([]*http.Request, n)
					for i := range reqs {
						reqs[i], _ = http.NewRequest("GET", c.urls(i), nil)
					}
					for i := 0; pb.Next(); i++ {
						if _, err := tr.RoundTrip(reqs[i%n]); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}
