package throttle

import (
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"
)

// BenchmarkTransportRoutes is a Transport's cost per request when requests
// take turns among several routes (first path segments of one host, and
// hosts): the lookup of a request's bucket should cost the same whether or
// not the route changes from one request to the next. paths=1 is the
// single-route case of BenchmarkTransportOverhead, without headers.
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

// BenchmarkTransportRoutesPaired measures the Transport with one route and
// with requests taking turns among 2 and 8 paths in turn, batch by batch in
// rotating order, so that the machine's load falls on all alike: the
// metrics are the median time per request of each, and each one's extra
// over one route (paths=N-vs-1-%), which a cache of the latest route alone
// shows (about +19% before issue #14).
func BenchmarkTransportRoutesPaired(b *testing.B) {
	resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody}
	base := roundTripFunc(func(*http.Request) (*http.Response, error) { return resp, nil })
	const batch = 64
	ns := []int{1, 2, 8}
	trs := make([]*Transport, len(ns))
	reqs := make([][]*http.Request, len(ns))
	for k, n := range ns {
		trs[k] = &Transport{Base: base, Config: Config{Limit: 1e9}}
		for i := range n {
			req, _ := http.NewRequest("GET", "http://api.test/p"+strconv.Itoa(i)+"/x", nil)
			reqs[k] = append(reqs[k], req)
		}
	}
	times := make([][]time.Duration, len(ns))
	for i := 0; b.Loop(); i++ {
		for j := range ns {
			k := (i + j) % len(ns)
			start := time.Now()
			for r := range batch {
				if _, err := trs[k].RoundTrip(reqs[k][r%len(reqs[k])]); err != nil {
					b.Fatal(err)
				}
			}
			times[k] = append(times[k], time.Since(start))
		}
	}
	median := func(ts []time.Duration) float64 {
		slices.Sort(ts)
		return float64(ts[len(ts)/2]) / batch
	}
	one := median(times[0])
	b.ReportMetric(one, "paths=1-ns/req")
	for k, n := range ns[1:] {
		m := median(times[k+1])
		b.ReportMetric(m, "paths="+strconv.Itoa(n)+"-ns/req")
		b.ReportMetric(100*(m/one-1), "paths="+strconv.Itoa(n)+"-vs-1-%")
	}
	b.ReportMetric(0, "ns/op") // an iteration is 3 batches: see the metrics
}
