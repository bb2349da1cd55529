package throttle

import (
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
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

// TestStateLimitZeroAndInf: a State's Limit means what Config.Limit means
// (0: not known, rate.Inf: no local limit), and version 1
// files, whose 0 with learned meant no local limit, restore as they did.
func TestStateLimitZeroAndInf(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		wantErr  string  // a substring of the error, which matches ErrBadState
		limit    float64 // the restored bucket's rate
		learning bool
	}{
		{"v2 no local limit", `{"version":2,"at":"2000-01-01T00:00:00Z","tokens":1,"limit":1.7976931348623157e+308,"burst":1,"learned":true}`, "", float64(rate.Inf), false},
		{"v2 not known", `{"version":2,"at":"2000-01-01T00:00:00Z","tokens":1,"limit":0,"burst":1}`, "", float64(rate.Inf), true},
		{"v2 not known, but learned", `{"version":2,"at":"2000-01-01T00:00:00Z","tokens":1,"limit":0,"burst":1,"learned":true}`, "", float64(rate.Inf), false},
		{"v2 no limit field", `{"version":2,"at":"2000-01-01T00:00:00Z","tokens":1,"burst":1}`, "", float64(rate.Inf), true},
		{"v2 rate", `{"version":2,"at":"2000-01-01T00:00:00Z","tokens":1,"limit":5,"burst":1,"learned":true}`, "", 5, false},
		{"v1 no local limit", `{"version":1,"at":"2000-01-01T00:00:00Z","tokens":1,"limit":0,"burst":1,"learned":true}`, "", float64(rate.Inf), false},
		{"v1 not known", `{"version":1,"at":"2000-01-01T00:00:00Z","tokens":1,"limit":0,"burst":1}`, "", float64(rate.Inf), true},
		{"v1 rate", `{"version":1,"at":"2000-01-01T00:00:00Z","tokens":1,"limit":5,"burst":1,"learned":true}`, "", 5, false},
		{"a later version", `{"version":3,"at":"2000-01-01T00:00:00Z","tokens":1,"limit":5,"burst":1}`, "version 3, want 1 to 2", 0, false},
		{"limit a word", `{"version":2,"at":"2000-01-01T00:00:00Z","tokens":1,"limit":"inf","burst":1}`, "cannot unmarshal", 0, false},
		{"negative limit", `{"version":2,"at":"2000-01-01T00:00:00Z","tokens":1,"limit":-1,"burst":1}`, "limit -1", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "state.json")
				require.NoError(t, os.WriteFile(path, []byte(tt.file), 0o600))
				b := NewBucket(Config{})
				f, err := PersistFile(b, path, 0)
				require.NotNil(t, f)
				defer f.Close()
				if tt.wantErr != "" {
					require.ErrorIs(t, err, ErrBadState, "PersistFile of %s", tt.file)
					assert.ErrorContains(t, err, tt.wantErr)
					return
				}
				require.NoError(t, err, "PersistFile of %s", tt.file)
				assert.Equal(t, rate.Limit(tt.limit), b.Limit(), "the restored rate")
				assert.Equal(t, tt.learning, b.Stats().Learning, "learning")
				// Saved again, it reads back the same.
				s := b.Snapshot()
				data, err := json.Marshal(s)
				require.NoError(t, err)
				var back State
				require.NoError(t, json.Unmarshal(data, &back), "%s", data)
				assert.Equal(t, s.Limit, back.Limit, "%s", data)
				assert.Equal(t, 2, back.Version)
				if tt.learning {
					assert.Zero(t, back.Limit, "a rate not known is saved as 0: %s", data)
				} else if tt.limit == float64(rate.Inf) {
					assert.Contains(t, string(data), `"limit":1.7976931348623157e+308`)
				}
			})
		})
	}
}

// TestStateLimitZeroByVersion: restored into a bucket that has learned a
// rate, a learned state's Limit of 0 lifts the limit in version 1 (its no
// local limit) and leaves the rate in version 2 (not known).
func TestStateLimitZeroByVersion(t *testing.T) {
	for _, tt := range []struct {
		version int
		want    func(learned rate.Limit) rate.Limit
	}{
		{1, func(rate.Limit) rate.Limit { return rate.Inf }},
		{2, func(learned rate.Limit) rate.Limit { return learned }},
	} {
		synctest.Test(t, func(t *testing.T) {
			b := NewBucket(Config{})
			b.ObserveQuota(http.StatusOK, Quota{Limit: 10, Remaining: 9, Reset: time.Now().Add(time.Second), Window: time.Second})
			learned := b.Limit()
			require.Less(t, learned, rate.Limit(100), "the server's pace")
			require.NoError(t, b.Restore(State{Version: tt.version, At: time.Now(), Tokens: 1, Burst: 1, Learned: true}))
			assert.Equal(t, tt.want(learned), b.Limit(), "version %d, Limit 0, learned", tt.version)
		})
	}
}
