package throttle

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// The Allow benchmarks run a bucket that always has tokens, so every call
// admits; "peer" is golang.org/x/time/rate in the same configuration.

func BenchmarkAllow(b *testing.B) {
	b.Run("impl=throttle", func(b *testing.B) {
		bk := NewBucket(Config{Limit: 1e9, Burst: 1e9})
		b.ReportAllocs()
		for b.Loop() {
			bk.Allow()
		}
	})
	b.Run("impl=xrate", func(b *testing.B) {
		l := rate.NewLimiter(1e9, 1e9)
		b.ReportAllocs()
		for b.Loop() {
			l.Allow()
		}
	})
	b.Run("impl=mutexGCRA", func(b *testing.B) {
		g := &mutexGCRA{epoch: time.Now(), interval: 1, tau: 1e9}
		b.ReportAllocs()
		for b.Loop() {
			g.allow()
		}
	})
	b.Run("impl=timeNow", func(b *testing.B) { // the floor: one clock read
		for b.Loop() {
			_ = time.Now()
		}
	})
}

func BenchmarkAllowParallel(b *testing.B) {
	b.Run("impl=throttle", func(b *testing.B) {
		bk := NewBucket(Config{Limit: 1e9, Burst: 1e9})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				bk.Allow()
			}
		})
	})
	b.Run("impl=xrate", func(b *testing.B) {
		l := rate.NewLimiter(1e9, 1e9)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				l.Allow()
			}
		})
	})
	b.Run("impl=mutexGCRA", func(b *testing.B) { // what the lock-free path must beat
		g := &mutexGCRA{epoch: time.Now(), interval: 1, tau: 1e9}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				g.allow()
			}
		})
	})
}

// mutexGCRA is the simplest Allow a bucket could have: GCRA under a mutex.
// BenchmarkAllowParallel runs it beside the bucket's lock-free path, which
// stays only while it is faster.
type mutexGCRA struct {
	mu            sync.Mutex
	epoch         time.Time
	tat           float64 // theoretical arrival time, ns since epoch
	interval, tau float64 // ns per token; interval × burst
}

func (g *mutexGCRA) allow() bool {
	now := float64(time.Since(g.epoch))
	g.mu.Lock()
	defer g.mu.Unlock()
	tat := max(g.tat, now)
	if tat+g.interval-now > g.tau {
		return false
	}
	g.tat = tat + g.interval
	return true
}

// BenchmarkWait measures a Wait that finds its token at once, and one that
// queues: at 1e5 tokens/s with a burst of 1, each Wait needs the token the
// previous one took and sleeps about 10µs for it.
func BenchmarkWait(b *testing.B) {
	ctx := context.Background()
	b.Run("case=immediate/impl=throttle", func(b *testing.B) {
		bk := NewBucket(Config{Limit: 1e9, Burst: 1e9})
		b.ReportAllocs()
		for b.Loop() {
			_ = bk.Wait(ctx)
		}
	})
	b.Run("case=immediate/impl=xrate", func(b *testing.B) {
		l := rate.NewLimiter(1e9, 1e9)
		b.ReportAllocs()
		for b.Loop() {
			_ = l.Wait(ctx)
		}
	})
	b.Run("case=queued/impl=throttle", func(b *testing.B) {
		bk := NewBucket(Config{Limit: 1e5, Burst: 1})
		b.ReportAllocs()
		for b.Loop() {
			if err := bk.Wait(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("case=queued/impl=xrate", func(b *testing.B) {
		l := rate.NewLimiter(1e5, 1)
		b.ReportAllocs()
		for b.Loop() {
			if err := l.Wait(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkQueue holds a queue of the given length and measures admitting
// (and withdrawing) one more waiter: O(1), whatever the length. It also
// reports the heap bytes each queued waiter costs the bucket (not counting
// the waiting goroutine's own stack).
func BenchmarkQueue(b *testing.B) {
	for _, depth := range []int{10, 10000} {
		b.Run(fmt.Sprintf("queued=%d", depth), func(b *testing.B) {
			bk := NewBucket(Config{Limit: 1e-6, Burst: 1, MaxQueue: depth + 1, MaxWait: -1})
			bk.Allow()
			ctx := context.Background()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			bk.mu.Lock()
			now := bk.ownLocked()
			for range depth {
				if w, _, err := bk.enqueueLocked(ctx, now, 1, false); err != nil || w == nil {
					b.Fatal(err)
				}
			}
			bk.releaseLocked(now)
			bk.mu.Unlock()
			runtime.ReadMemStats(&after)
			perWaiter := float64(after.TotalAlloc-before.TotalAlloc) / float64(depth)

			b.ReportAllocs()
			for b.Loop() {
				bk.mu.Lock()
				now := bk.ownLocked()
				w, _, err := bk.enqueueLocked(ctx, now, 1, false)
				if err != nil {
					b.Fatal(err)
				}
				bk.q.remove(w)
				bk.releaseLocked(now)
				bk.mu.Unlock()
			}
			b.ReportMetric(perWaiter, "heapB/waiter")

			bk.mu.Lock()
			bk.ownLocked()
			for w := bk.q.head; w != nil; w = bk.q.head {
				bk.finishLocked(0, w, context.Canceled)
			}
			bk.mu.Unlock()
		})
	}
}
