package redisstore_test

import (
	"testing"

	"github.com/go-redis/redis_rate/v10"

	"github.com/go-throttle/throttle/redisstore"
	"github.com/go-throttle/throttle/redisstore/redistest"
)

// The benchmarks measure one admission, a round trip to a loopback
// redis-server, beside the same admission by redis_rate, the common GCRA
// limiter for go-redis, so that a ratio can be read from one run. Both
// admit every call (a million per second, burst a million: far more than
// one server serves) and both write the bucket on every call.

const benchRate = 1_000_000

// BenchmarkAdmit runs both limiters against one server, each sub-benchmark
// beside its peer, so that load on the machine falls on both alike. The
// "notimeout" variant shows what the per-call Timeout (a timer) costs.
func BenchmarkAdmit(b *testing.B) {
	addr, _, _ := redistest.Start(b)
	client := newClient(b, addr)
	ours := redisstore.New(client, redisstore.Options{})
	noTimeout := redisstore.New(client, redisstore.Options{Timeout: -1})
	peer := redis_rate.NewLimiter(client)
	limit := redis_rate.PerSecond(benchRate)
	impls := []struct {
		name  string
		admit func(b *testing.B)
	}{
		{"throttle", func(b *testing.B) {
			if wait, err := ours.Take(b.Context(), "bench", 1, benchRate, benchRate); err != nil || wait != 0 {
				b.Fatalf("Take = %v, %v; want 0, nil", wait, err)
			}
		}},
		{"throttle-notimeout", func(b *testing.B) {
			if wait, err := noTimeout.Take(b.Context(), "bench2", 1, benchRate, benchRate); err != nil || wait != 0 {
				b.Fatalf("Take = %v, %v; want 0, nil", wait, err)
			}
		}},
		{"redis_rate", func(b *testing.B) {
			if res, err := peer.Allow(b.Context(), "bench", limit); err != nil || res.Allowed != 1 {
				b.Fatalf("Allow = %+v, %v; want allowed", res, err)
			}
		}},
	}
	for _, mode := range []string{"serial", "parallel"} {
		for _, impl := range impls {
			b.Run("mode="+mode+"/impl="+impl.name, func(b *testing.B) {
				b.ReportAllocs()
				if mode == "serial" {
					for b.Loop() {
						impl.admit(b)
					}
					return
				}
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						impl.admit(b)
					}
				})
			})
		}
	}
}
