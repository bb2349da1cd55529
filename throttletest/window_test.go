package throttletest

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestCounterWindows checks where windows begin (Config.Phase, Quota.Align)
// and what counting refusals (Quota.CountRefused) and rounding the sliding
// estimate (Quota.RoundEstimate) do.
func TestCounterWindows(t *testing.T) {
	// everyTenth returns the steps of a client sending every 100ms from
	// `from` to `to` (excluded), each answered by answer(at).
	everyTenth := func(from, to time.Duration, answer func(at time.Duration) step) []step {
		var s []step
		for at := from; at < to; at += 100 * ms {
			s = append(s, answer(at))
		}
		return s
	}
	// untilWindowEnd is a refusal at `at` in 1-second windows aligned to 0.
	untilWindowEnd := func(at time.Duration) step {
		reset := at.Truncate(time.Second) + time.Second
		return step{at: at, reset: reset, retry: reset - at}
	}
	// firstWindow is the admissions at 0, 100ms... 900ms of a fresh 10/s
	// window aligned to 0.
	firstWindow := everyTenth(0, time.Second, func(at time.Duration) step {
		return step{at: at, admitted: true, remaining: 9 - int64(at/(100*ms)), reset: time.Second}
	})
	cases := []counterCase{
		{
			name:   "FixedWindow offset",
			quota:  Quota{Limit: 2, Window: time.Second},
			offset: 300 * ms,
			steps: []step{
				// The first window began 700ms before the handler.
				{at: 0, admitted: true, remaining: 1, reset: 300 * ms},
				{at: 0, admitted: true, remaining: 0, reset: 300 * ms},
				{at: 0, reset: 300 * ms, retry: 300 * ms},
				{at: 300 * ms, admitted: true, remaining: 1, reset: 1300 * ms},
				{at: 1299 * ms, admitted: true, remaining: 0, reset: 1300 * ms},
				{at: 1299 * ms, reset: 1300 * ms, retry: ms},
				{at: 3700 * ms, admitted: true, remaining: 1, reset: 4300 * ms},
			},
		},
		{
			name:  "FixedWindow AlignFirstRequest",
			quota: Quota{Limit: 2, Window: time.Second, Align: AlignFirstRequest},
			steps: []step{
				{at: 250 * ms, admitted: true, remaining: 1, reset: 1250 * ms},
				{at: 900 * ms, admitted: true, remaining: 0, reset: 1250 * ms},
				{at: 1000 * ms, reset: 1250 * ms, retry: 250 * ms},
				{at: 1250 * ms, admitted: true, remaining: 1, reset: 2250 * ms},
				// Nothing for a while: the next window starts late.
				{at: 4100 * ms, admitted: true, remaining: 1, reset: 5100 * ms},
				{at: 5099 * ms, admitted: true, remaining: 0, reset: 5100 * ms},
			},
		},
		{
			name:  "SlidingWindow AlignFirstRequest",
			quota: Quota{Limit: 10, Window: time.Second, Algorithm: SlidingWindow, Align: AlignFirstRequest},
			steps: concat(
				repeat(500*ms, 10, 9, func(int) time.Duration { return 1500 * ms }),
				[]step{
					{at: 500 * ms, reset: 1500 * ms, retry: time.Second},
					// A window opens at 1.7s; the last second still covers
					// 800ms of the previous one: 10×0.8 = 8.
					{at: 1700 * ms, admitted: true, remaining: 1, reset: 2700 * ms},
					{at: 1700 * ms, admitted: true, remaining: 0, reset: 2700 * ms},
					{at: 1700 * ms, reset: 2700 * ms, retry: time.Second},
					// 10×0.1 + 2 = 3 → 10 − 3 − 1.
					{at: 2400 * ms, admitted: true, remaining: 6, reset: 2700 * ms},
					// Contiguous from 2.7s: 3×1 + 1.
					{at: 2700 * ms, admitted: true, remaining: 6, reset: 3700 * ms},
					// 4.7s to 5s was a gap: the previous window is forgotten.
					{at: 5 * time.Second, admitted: true, remaining: 9, reset: 6 * time.Second},
				},
			),
		},
		{
			// A client at exactly the quota's rate: after its first
			// refusal, the previous window's share and its own refusals
			// add up to the limit at every request.
			name:  "SlidingWindow CountRefused",
			quota: Quota{Limit: 10, Window: time.Second, Algorithm: SlidingWindow, CountRefused: true},
			steps: concat(
				firstWindow,
				everyTenth(time.Second, 3*time.Second, untilWindowEnd),
				// A pause of half a window: 10×0.5 of the last window's
				// refusals remain.
				[]step{{at: 3500 * ms, admitted: true, remaining: 4, reset: 4 * time.Second}},
			),
		},
		{
			// The same client against the same server, refusals not
			// counted: one refusal, then every request admitted.
			name:  "SlidingWindow refusals not counted",
			quota: Quota{Limit: 10, Window: time.Second, Algorithm: SlidingWindow},
			steps: concat(
				firstWindow,
				[]step{untilWindowEnd(time.Second)},
				// k admitted at 1.k s: (10 − k) + k, nothing left; then
				// 9×(1 − k/10) + k + 1 < 10, and ⌈9×(1 − k/10)⌉ + k + 1 ≥ 10.
				everyTenth(1100*ms, 3*time.Second, func(at time.Duration) step {
					return step{at: at, admitted: true, reset: at.Truncate(time.Second) + time.Second}
				}),
				[]step{{at: 3500 * ms, admitted: true, remaining: 4, reset: 4 * time.Second}},
			),
		},
		{
			// 10 × (1 − 0.04) = 9.6 rounds to 10: refused, where rounding
			// down admits it; 9.4 rounds to 9.
			name:  "SlidingWindow RoundEstimate",
			quota: Quota{Limit: 10, Window: time.Second, Algorithm: SlidingWindow, RoundEstimate: true},
			steps: concat(
				firstWindow,
				[]step{
					{at: 1040 * ms, reset: 2 * time.Second, retry: 960 * ms},
					{at: 1060 * ms, admitted: true, reset: 2 * time.Second},
				},
			),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, tc.run)
	}
}

// TestPrevShareHuge checks the sliding estimate's 128-bit product: with
// CountRefused the previous window's count has no bound.
func TestPrevShareHuge(t *testing.T) {
	c := newCounter(Quota{Limit: MaxLimit, Window: 24 * time.Hour, Algorithm: SlidingWindow, CountRefused: true}, 0)
	c.prev, c.prevEnd = math.MaxInt64, c.w
	floor, nearest, ceil := c.prevShare(c.w + c.w/2)
	assert.Equal(t, int64(math.MaxInt64/2), floor, "prevShare floor")
	assert.Equal(t, int64(math.MaxInt64/2+1), nearest, "prevShare nearest: a half rounds up")
	assert.Equal(t, int64(math.MaxInt64/2+1), ceil, "prevShare ceil")
	floor, nearest, ceil = c.prevShare(c.w)
	assert.Equal(t, [3]int64{math.MaxInt64, math.MaxInt64, math.MaxInt64}, [3]int64{floor, nearest, ceil}, "prevShare at the window's start")
}
