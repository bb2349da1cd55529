package throttle

import (
	"math"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

func TestRestoreRefillsButNeverBursts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 1, Burst: 10})
		require.True(t, b.AllowN(10))
		s := b.Snapshot()
		require.InDelta(t, 0, s.Tokens, 1e-9)

		time.Sleep(3 * time.Second) // the process is down for 3 s
		b2 := NewBucket(Config{Limit: 1, Burst: 10})
		require.NoError(t, b2.Restore(s))
		assert.InDelta(t, 3, b2.Tokens(), 1e-9, "refilled for the time that passed, not full")

		time.Sleep(time.Hour)
		b3 := NewBucket(Config{Limit: 1, Burst: 10})
		require.NoError(t, b3.Restore(s))
		assert.InDelta(t, 10, b3.Tokens(), 1e-9, "never more than the burst")
	})
}

func TestRestoreKeepsCooldown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 10, MaxWait: -1})
		b.ObserveQuota(http.StatusTooManyRequests, Quota{Limit: -1, Remaining: -1, RetryAfter: 30 * time.Second})
		s := b.Snapshot()
		time.Sleep(10 * time.Second)

		b2 := NewBucket(Config{Limit: 10, MaxWait: -1})
		require.NoError(t, b2.Restore(s))
		start := time.Now()
		require.NoError(t, b2.Wait(t.Context()))
		// Within 1ns: the restored tokens carry float rounding.
		assert.InDelta(t, float64(20*time.Second), float64(time.Since(start)), 1, "the cooldown survives the restart")
	})
}

func TestRestoreLearnedAndCeiling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{})
		q := Quota{Limit: 100, Remaining: 90, Reset: time.Now().Add(10 * time.Second), Window: 10 * time.Second}
		b.ObserveQuota(http.StatusOK, q)
		s := b.Snapshot()
		require.True(t, s.Learned)

		fresh := NewBucket(Config{})
		require.NoError(t, fresh.Restore(s))
		assert.False(t, fresh.Stats().Learning, "a restored bucket does not probe again")
		assert.Equal(t, b.Limit(), fresh.Limit())

		capped := NewBucket(Config{Limit: 2})
		require.NoError(t, capped.Restore(s))
		assert.Equal(t, rate.Limit(2), capped.Limit(), "the configured limit stays a ceiling")
	})
}

func TestRestoreClockWentBackwards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := State{Version: stateVersion, At: time.Now().Add(time.Hour), Tokens: 2, Limit: 1, Burst: 10}
		b := NewBucket(Config{Limit: 1, Burst: 10})
		require.NoError(t, b.Restore(s))
		assert.InDelta(t, 2, b.Tokens(), 1e-9, "a snapshot from the future: no time passed")
	})
}

func TestRestoreRejectsBadState(t *testing.T) {
	good := State{Version: stateVersion, At: time.Now(), Tokens: 1, Limit: 1, Burst: 1}
	tests := []struct {
		name   string
		mutate func(*State)
	}{
		{"version", func(s *State) { s.Version = 99 }},
		{"no time", func(s *State) { s.At = time.Time{} }},
		{"NaN tokens", func(s *State) { s.Tokens = math.NaN() }},
		{"negative limit", func(s *State) { s.Limit = -1 }},
		{"negative burst", func(s *State) { s.Burst = -3 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := good
			tt.mutate(&s)
			b := NewBucket(Config{Limit: 5, Burst: 5})
			err := b.Restore(s)
			require.ErrorIs(t, err, ErrBadState)
			assert.Equal(t, 5, b.Burst(), "a bad state changes nothing")
			assert.InDelta(t, 5, b.Tokens(), 1e-6)
		})
	}
}
