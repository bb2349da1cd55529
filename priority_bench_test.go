package throttle

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkQueuePriority is BenchmarkQueue with priorities: a queue of the
// given length, its waiters all of one priority (levels=1, the queue as it
// was before priorities) or spread over the three (levels=3), and the cost
// of admitting and withdrawing one more waiter; with levels=3 the
// newcomer's priority goes round, so that a third of them overtake two
// levels of waiters. With margin=100 the waiters' MaxWait leaves the last
// of them 100 tokens to spare: every 100 overtakings walk the levels
// overtaken to re-plan them (margin=inf: never).
func BenchmarkQueuePriority(b *testing.B) {
	for _, depth := range []int{10, 10000} {
		for _, spread := range []int{1, 3} {
			// At 1e-3 tokens/s a token is 1000s: margin=100 leaves the
			// last waiter 100 tokens of margin.
			b.Run(fmt.Sprintf("queued=%d/levels=%d/margin=inf", depth, spread), func(b *testing.B) {
				benchQueue(b, depth, spread, -1)
			})
			b.Run(fmt.Sprintf("queued=%d/levels=%d/margin=100", depth, spread), func(b *testing.B) {
				benchQueue(b, depth, spread, time.Duration(depth+100)*1000*time.Second)
			})
		}
	}
}

func benchQueue(b *testing.B, depth, spread int, maxWait time.Duration) {
	bk := NewBucket(Config{Limit: 1e-3, Burst: 1, MaxQueue: depth + 1, MaxWait: maxWait})
	bk.Allow()
	var ctxs []context.Context
	for p := range spread {
		ctxs = append(ctxs, WithPriority(context.Background(), PriorityHigh-Priority(p)))
	}
	bk.mu.Lock()
	now := bk.ownLocked()
	for i := range depth {
		if w, _, err := bk.enqueueLocked(ctxs[i%spread], now, 1, false); err != nil || w == nil {
			b.Fatal(err)
		}
	}
	bk.releaseLocked(now)
	bk.mu.Unlock()

	b.ReportAllocs()
	i := 0
	for b.Loop() {
		bk.mu.Lock()
		now := bk.ownLocked()
		w, _, err := bk.enqueueLocked(ctxs[i%spread], now, 1, false)
		if err != nil {
			b.Fatal(err)
		}
		bk.q.remove(w)
		bk.releaseLocked(now)
		bk.mu.Unlock()
		i++
	}
	b.StopTimer()
	if q := bk.Stats().Queued; q != depth {
		b.Fatalf("%d waiters left of %d: some were refused", q, depth)
	}
	bk.mu.Lock()
	bk.ownLocked()
	for w := bk.q.head; w != nil; w = bk.q.head {
		bk.finishLocked(0, w, context.Canceled)
	}
	bk.mu.Unlock()
}

// BenchmarkWithPriority measures what Transport.Priority adds to a request:
// one context.
func BenchmarkWithPriority(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_ = WithPriority(ctx, PriorityLow)
	}
}
