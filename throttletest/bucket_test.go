package throttletest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestCounterBuckets checks TokenBucket, GCRA and LeakyBucket with a Burst
// other than Limit, and the delay of a LeakyBucket without NoDelay.
func TestCounterBuckets(t *testing.T) {
	hundredths := func(i int) time.Duration { return time.Duration(i+1) * 100 * ms }
	cases := []counterCase{
		{
			// 10 per second, 4 at once: full again 100ms after each token.
			name:  "GCRA Burst < Limit",
			quota: Quota{Limit: 10, Window: time.Second, Algorithm: GCRA, Burst: 4},
			steps: concat(
				repeat(0, 4, 3, hundredths),
				[]step{
					{at: 0, reset: 400 * ms, retry: 100 * ms},
					// 2.5 tokens: one taken leaves 1.5, 2.5 short of full.
					{at: 250 * ms, admitted: true, remaining: 1, reset: 500 * ms},
					{at: 250 * ms, admitted: true, remaining: 0, reset: 600 * ms},
					{at: 250 * ms, reset: 600 * ms, retry: 50 * ms},
					// Refill stops at Burst.
					{at: time.Hour, admitted: true, remaining: 3, reset: time.Hour + 100*ms},
				},
			),
		},
		{
			name:  "TokenBucket Burst > Limit",
			quota: Quota{Limit: 2, Window: time.Second, Algorithm: TokenBucket, Burst: 5},
			steps: concat(
				repeat(0, 5, 4, func(i int) time.Duration { return time.Duration(i+1) * 500 * ms }),
				[]step{
					{at: 0, reset: 2500 * ms, retry: 500 * ms},
					{at: time.Second, admitted: true, remaining: 1, reset: 3 * time.Second},
				},
			),
		},
		{
			// nginx: rate=2r/s burst=2. Each request waits for those
			// ahead of it to leak out, 500ms apiece.
			name:  "LeakyBucket",
			quota: Quota{Limit: 2, Window: time.Second, Algorithm: LeakyBucket, Burst: 3},
			steps: []step{
				{at: 0, admitted: true, remaining: 2, reset: 500 * ms},
				{at: 0, admitted: true, remaining: 1, reset: time.Second, delay: 500 * ms},
				{at: 0, admitted: true, remaining: 0, reset: 1500 * ms, delay: time.Second},
				{at: 0, reset: 1500 * ms, retry: 500 * ms},
				// One has leaked out; two are ahead.
				{at: 500 * ms, admitted: true, remaining: 0, reset: 2 * time.Second, delay: time.Second},
				{at: 2 * time.Second, admitted: true, remaining: 2, reset: 2500 * ms},
				// A quarter of a request is still in the bucket.
				{at: 2375 * ms, admitted: true, remaining: 1, reset: 3 * time.Second, delay: 125 * ms},
			},
		},
		{
			// nginx: rate=2r/s burst=2 nodelay.
			name:  "LeakyBucket NoDelay",
			quota: Quota{Limit: 2, Window: time.Second, Algorithm: LeakyBucket, Burst: 3, NoDelay: true},
			steps: []step{
				{at: 0, admitted: true, remaining: 2, reset: 500 * ms},
				{at: 0, admitted: true, remaining: 1, reset: time.Second},
				{at: 0, admitted: true, remaining: 0, reset: 1500 * ms},
				{at: 0, reset: 1500 * ms, retry: 500 * ms},
				{at: 500 * ms, admitted: true, remaining: 0, reset: 2 * time.Second},
			},
		},
		{
			// nginx: rate=60r/m, no burst.
			name:  "LeakyBucket Burst 1",
			quota: Quota{Limit: 60, Window: time.Minute, Algorithm: LeakyBucket, Burst: 1},
			steps: []step{
				{at: 0, admitted: true, remaining: 0, reset: time.Second},
				{at: 999 * ms, reset: time.Second, retry: ms},
				{at: time.Second, admitted: true, remaining: 0, reset: 2 * time.Second},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, tc.run)
	}
}

// TestCounterStated checks the limit each algorithm states.
func TestCounterStated(t *testing.T) {
	cases := []struct {
		quota Quota
		want  int64
	}{
		{Quota{Limit: 10}, 10},
		{Quota{Limit: 10, Algorithm: SlidingWindow}, 10},
		{Quota{Limit: 10, Algorithm: TokenBucket, Burst: 4}, 10},
		{Quota{Limit: 10, Algorithm: GCRA, Burst: 4}, 4},
		{Quota{Limit: 10, Algorithm: GCRA}, 10},
		{Quota{Limit: 10, Algorithm: LeakyBucket, Burst: 30}, 30},
	}
	for _, tc := range cases {
		got := newCounter(tc.quota, 0).stated()
		assert.Equal(t, tc.want, got, "newCounter(%+v).stated()", tc.quota)
	}
}
