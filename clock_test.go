package throttle

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestInstantArithmetic(t *testing.T) {
	tests := []struct {
		name string
		got  instant
		want instant
	}{
		{"add rounds to the nanosecond", instant(10).add(2.5), 13},
		{"add rounds down below half", instant(10).add(2.4), 12},
		{"add goes back", instant(10).add(-12.4), -2},
		{"never stays never", never.add(-1e18), never},
		{"+Inf is never", instant(0).add(math.Inf(1)), never},
		{"NaN is never", instant(0).add(math.NaN()), never},
		{"beyond the horizon is the horizon", instant(horizon - 10).add(20), horizon},
		{"far back is the horizon", instant(-horizon + 10).add(-1e300), -horizon},
		{"-Inf is the horizon", instant(0).add(math.Inf(-1)), -horizon},
		{"the nanosecond at 200 days", instant(200 * 24 * time.Hour).add(1), instant(200*24*time.Hour) + 1},
		{"a duration beyond the horizon", sinceEpoch(time.Duration(math.MaxInt64)), horizon},
		{"a duration far back", sinceEpoch(time.Duration(math.MinInt64)), -horizon},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.got)
		})
	}
	assert.Equal(t, math.Inf(1), never.sub(0), "never.sub")
	assert.Equal(t, math.Inf(-1), instant(0).sub(never), "sub(never)")
	assert.Equal(t, -2.0*horizon, instant(-horizon).sub(horizon), "sub does not overflow across the horizon")
	day200 := instant(200 * 24 * time.Hour)
	assert.Equal(t, 1.0, (day200 + 1).sub(day200), "one nanosecond, 200 days on")
}
