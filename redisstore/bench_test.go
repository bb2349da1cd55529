package redisstore_test

import (
	"testing"
	"time"

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

func BenchmarkTake(b *testing.B) {
	addr, _, _ := redistest.Start(b)
	s := redisstore.New(newClient(b, addr), redisstore.Options{Timeout: time.Second})
	take := func(b *testing.B) {
		wait, err := s.Take(b.Context(), "bench", 1, benchRate, benchRate)
		if err != nil || wait != 0 {
			b.Fatalf("Take = %v, %v; want 0, nil", wait, err)
		}
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			take(b)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				take(b)
			}
		})
	})
}

func BenchmarkRedisRateAllow(b *testing.B) {
	addr, _, _ := redistest.Start(b)
	l := redis_rate.NewLimiter(newClient(b, addr))
	limit := redis_rate.PerSecond(benchRate)
	allow := func(b *testing.B) {
		res, err := l.Allow(b.Context(), "bench", limit)
		if err != nil || res.Allowed != 1 {
			b.Fatalf("Allow = %+v, %v; want allowed", res, err)
		}
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			allow(b)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				allow(b)
			}
		})
	})
}
