package throttletest

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

// step is one request to a counter and what it should answer.
type step struct {
	at        time.Duration // elapsed time of the request
	admitted  bool
	remaining int64
	reset     time.Duration // elapsed time
	retry     time.Duration // of a refused request
	delay     time.Duration // of an admitted request (LeakyBucket)
}

// counterCase is a quota, its window boundaries' offset, and the requests
// it counts.
type counterCase struct {
	name   string
	quota  Quota
	offset time.Duration
	steps  []step
}

// run feeds tc's steps to a new counter, as Handler.decide does, and checks
// every value exactly.
func (tc counterCase) run(t *testing.T) {
	t.Helper()
	c := newCounter(tc.quota, tc.offset)
	for i, s := range tc.steps {
		c.advance(s.at)
		ok := c.allows(s.at)
		if ok {
			c.take()
		} else {
			c.refuse(s.at)
		}
		remaining, reset, retry := c.report(s.at)
		got := step{at: s.at, admitted: ok, remaining: remaining, reset: reset}
		if ok {
			got.delay = c.delay()
		} else {
			got.retry = retry
		}
		require.Equal(t, s, got, "step %d at %v", i, s.at)
	}
}

// repeat returns n admitted steps at the same time, remaining counting down.
func repeat(at time.Duration, n int, from int64, reset func(i int) time.Duration) []step {
	var s []step
	for i := range n {
		s = append(s, step{at: at, admitted: true, remaining: from - int64(i), reset: reset(i)})
	}
	return s
}

// TestCounter drives the pure quota arithmetic with synthetic elapsed times
// and checks every value exactly.
func TestCounter(t *testing.T) {
	oneSecond := func(int) time.Duration { return time.Second }
	cases := []counterCase{
		{
			name:  "FixedWindow",
			quota: Quota{Limit: 3, Window: time.Second},
			steps: concat(
				repeat(0, 3, 2, oneSecond),
				[]step{
					{at: 0, remaining: 0, reset: time.Second, retry: time.Second},
					{at: 999 * ms, remaining: 0, reset: time.Second, retry: ms},
					{at: time.Second, admitted: true, remaining: 2, reset: 2 * time.Second},
					// Windows stay aligned to the start, however late the request.
					{at: 5500 * ms, admitted: true, remaining: 2, reset: 6 * time.Second},
				},
			),
		},
		{
			name:  "SlidingWindow",
			quota: Quota{Limit: 10, Window: time.Second, Algorithm: SlidingWindow},
			steps: concat(
				repeat(0, 10, 9, oneSecond),
				[]step{
					{at: 0, remaining: 0, reset: time.Second, retry: time.Second},
					// The window has ended, yet the estimate is 10×1 + 0.
					{at: time.Second, remaining: 0, reset: 2 * time.Second, retry: time.Second},
					// 10×0.75 = 7.5: 1 + 7.5 → remaining 10 − ⌈8.5⌉ = 1.
					{at: 1250 * ms, admitted: true, remaining: 1, reset: 2 * time.Second},
					{at: 1250 * ms, admitted: true, remaining: 0, reset: 2 * time.Second},
					// 2 + 7.5 = 9.5 < 10: admitted, although nothing remained.
					{at: 1250 * ms, admitted: true, remaining: 0, reset: 2 * time.Second},
					{at: 1250 * ms, remaining: 0, reset: 2 * time.Second, retry: 750 * ms},
					// 3×0.5 + 1 = 2.5 → remaining 10 − 3 = 7.
					{at: 2500 * ms, admitted: true, remaining: 7, reset: 3 * time.Second},
					// A skipped window forgets the past.
					{at: 5 * time.Second, admitted: true, remaining: 9, reset: 6 * time.Second},
				},
			),
		},
		{
			name:  "TokenBucket",
			quota: Quota{Limit: 10, Window: time.Second, Algorithm: TokenBucket},
			steps: concat(
				// Each token taken is 100ms of refill.
				repeat(0, 10, 9, func(i int) time.Duration { return time.Duration(i+1) * 100 * ms }),
				[]step{
					{at: 0, remaining: 0, reset: time.Second, retry: 100 * ms},
					{at: 50 * ms, remaining: 0, reset: time.Second, retry: 50 * ms},
					// 2.5 tokens: one taken leaves 1.5, full again in 850ms.
					{at: 250 * ms, admitted: true, remaining: 1, reset: 1100 * ms},
					{at: 250 * ms, admitted: true, remaining: 0, reset: 1200 * ms},
					{at: 250 * ms, remaining: 0, reset: 1200 * ms, retry: 50 * ms},
					// Refill stops at Limit.
					{at: time.Hour, admitted: true, remaining: 9, reset: time.Hour + 100*ms},
				},
			),
		},
		{
			name:  "TokenBucket uneven rate",
			quota: Quota{Limit: 3, Window: time.Second, Algorithm: TokenBucket},
			steps: []step{
				{at: 0, admitted: true, remaining: 2, reset: 333333334},
				{at: 0, admitted: true, remaining: 1, reset: 666666667},
				{at: 0, admitted: true, remaining: 0, reset: time.Second},
				{at: 0, remaining: 0, reset: time.Second, retry: 333333334},
				{at: 333333333, remaining: 0, reset: time.Second, retry: 1},
				{at: 333333334, admitted: true, remaining: 0, reset: 1333333334},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, tc.run)
	}
}

func concat[S ~[]E, E any](s ...S) S {
	var out S
	for _, x := range s {
		out = append(out, x...)
	}
	return out
}

// TestCounterHuge checks that quotas whose Limit×Window overflows an int64
// in nanoseconds still count exactly, and that very late requests do not
// overflow.
func TestCounterHuge(t *testing.T) {
	cases := []Quota{
		{Algorithm: FixedWindow},
		{Algorithm: SlidingWindow},
		{Algorithm: TokenBucket},
		{Algorithm: GCRA},
		{Algorithm: LeakyBucket, NoDelay: true},
		{Algorithm: FixedWindow, Align: AlignFirstRequest},
		{Algorithm: SlidingWindow, CountRefused: true},
	}
	for _, q := range cases {
		q.Limit, q.Window = math.MaxInt, 24*time.Hour
		t.Run(fmt.Sprintf("%+v", q), func(t *testing.T) {
			c := newCounter(q, 0)
			assert.Equal(t, int64(MaxLimit), c.limit)
			assert.Greater(t, c.unit, time.Duration(1), "unit")
			late := time.Duration(math.MaxInt64 / 2)
			for _, at := range []time.Duration{0, late} {
				c.advance(at)
				require.True(t, c.allows(at), "allows at %v", at)
				c.take()
				remaining, reset, _ := c.report(at)
				assert.Equal(t, int64(MaxLimit-1), remaining, "remaining at %v", at)
				assert.Greater(t, reset, at, "reset at %v", at)
			}
		})
	}
	// A huge Burst coarsens the unit as a huge Limit does.
	c := newCounter(Quota{Limit: 1, Window: 24 * time.Hour, Algorithm: GCRA, Burst: math.MaxInt}, 0)
	assert.Equal(t, int64(MaxLimit), c.burst)
	assert.Greater(t, c.unit, time.Duration(1), "unit")
	c.advance(0)
	require.True(t, c.allows(0))
	c.take()
	remaining, reset, _ := c.report(0)
	assert.Equal(t, int64(MaxLimit-1), remaining, "remaining")
	assert.Equal(t, 24*time.Hour, reset, "reset: a day for one token")
}

func TestQuotaNormalize(t *testing.T) {
	cases := []struct {
		in, want Quota
	}{
		{Quota{}, Quota{Limit: DefaultLimit, Window: DefaultWindow}},
		{Quota{Limit: -5, Window: -time.Second}, Quota{Limit: DefaultLimit, Window: DefaultWindow}},
		{Quota{Limit: 5000, Window: time.Hour, Algorithm: TokenBucket}, Quota{Limit: 5000, Window: time.Hour, Algorithm: TokenBucket}},
		{Quota{Limit: math.MaxInt, Window: time.Hour}, Quota{Limit: MaxLimit, Window: time.Hour}},
		{Quota{Algorithm: GCRA, Burst: -3}, Quota{Limit: DefaultLimit, Window: DefaultWindow, Algorithm: GCRA}},
		{Quota{Algorithm: LeakyBucket, Burst: math.MaxInt, NoDelay: true}, Quota{Limit: DefaultLimit, Window: DefaultWindow, Algorithm: LeakyBucket, Burst: MaxLimit, NoDelay: true}},
		{Quota{Align: AlignClock}, Quota{Limit: DefaultLimit, Window: DefaultWindow, Align: AlignClock}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.in), func(t *testing.T) {
			assert.Equal(t, tc.want, tc.in.normalize(), "Quota(%v).normalize()", tc.in)
		})
	}
	panics := []struct {
		q    Quota
		want string
	}{
		{Quota{Algorithm: 7}, "throttletest: unknown Algorithm(7)"},
		{Quota{Align: 3}, "throttletest: unknown Alignment(3)"},
		{Quota{Burst: 5}, "throttletest: Quota.Burst with FixedWindow, which has no burst"},
		{Quota{Algorithm: TokenBucket, Align: AlignFirstRequest}, "throttletest: Quota.Align with TokenBucket, which has no windows"},
		{Quota{CountRefused: true}, "throttletest: Quota.CountRefused with FixedWindow, whose answers it would not change"},
		{Quota{Algorithm: GCRA, CountRefused: true}, "throttletest: Quota.CountRefused with GCRA, whose answers it would not change"},
		{Quota{RoundEstimate: true}, "throttletest: Quota.RoundEstimate with FixedWindow, which has no estimate"},
		{Quota{Algorithm: TokenBucket, NoDelay: true}, "throttletest: Quota.NoDelay with TokenBucket, which never delays"},
	}
	for _, tc := range panics {
		assert.PanicsWithValue(t, tc.want, func() { tc.q.normalize() }, "Quota(%+v).normalize()", tc.q)
	}
}
