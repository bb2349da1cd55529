package throttle

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// States that parse but no bucket could have saved. Each is refused with
// ErrBadState or clamped to what the bucket allows; either way the bucket
// admits each of its next requests within MaxCooldown (the bound of every
// server-derived wait) and saves a state that marshals.
func TestRestoreAbsurdState(t *testing.T) {
	const maxCooldown = time.Minute
	tests := []struct {
		name   string
		config Config
		mutate func(*State)
		bad    bool
	}{
		{"tokens -1e308", Config{Limit: 1, Burst: 5}, func(s *State) { s.Tokens = -1e308 }, true},
		{"tokens +1e308", Config{Limit: 1, Burst: 5}, func(s *State) { s.Tokens = 1e308 }, true},
		{"tokens -1e9", Config{Limit: 1, Burst: 5}, func(s *State) { s.Tokens = -1e9 }, false},
		{"tokens -1e9 learned", Config{}, func(s *State) { s.Tokens, s.Learned = -1e9, true }, false},
		{"limit 1e-300", Config{}, func(s *State) { s.Limit, s.Learned = 1e-300, true }, false},
		{"limit 1e300", Config{}, func(s *State) { s.Limit, s.Learned = 1e300, true }, false},
		{"server limit +Inf", Config{}, func(s *State) { s.ServerLimit, s.Learned = math.Inf(1), true }, true},
		{"server limit -Inf", Config{}, func(s *State) { s.ServerLimit, s.Learned = math.Inf(-1), true }, true},
		{"server limit 1e300", Config{}, func(s *State) { s.ServerLimit, s.Learned = 1e300, true }, true},
		{"probe rate 1e-300", Config{}, func(s *State) { s.ProbeMax, s.Learned = 1e-300, true }, false},
		{"probe rate 1e300", Config{}, func(s *State) { s.ProbeMax, s.Learned = 1e300, true }, true},
		{"cooldown in year 9000", Config{Limit: 1}, func(s *State) { s.CooldownUntil = time.Date(9000, 1, 1, 0, 0, 0, 0, time.UTC) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := tt.config
				c.MaxCooldown, c.MaxWait = maxCooldown, -1
				b := NewBucket(c)
				s := State{Version: stateVersion, At: time.Now(), Tokens: 1, Limit: 1, Burst: 5}
				tt.mutate(&s)
				err := b.Restore(s)
				if tt.bad {
					require.ErrorIs(t, err, ErrBadState, "Restore(%+v)", s)
				} else {
					require.NoError(t, err, "Restore(%+v)", s)
				}
				checkSavable(t, b, c)
				for i := range 2 {
					start := time.Now()
					f, err := b.Begin(t.Context())
					require.NoError(t, err)
					f.Done(nil) // no answer: a learning bucket probes again
					assert.LessOrEqual(t, time.Since(start), maxCooldown, "Restore(%+v): admission %d waited past MaxCooldown", s, i)
				}
			})
		})
	}
}

// checkSavable fails t unless b's snapshot marshals, parses, and restores
// into a fresh bucket of config c.
func checkSavable(t *testing.T, b *Bucket, c Config) {
	t.Helper()
	data, err := json.Marshal(b.Snapshot())
	require.NoError(t, err, "Snapshot of the restored bucket does not marshal")
	var s State
	require.NoError(t, json.Unmarshal(data, &s), "%s", data)
	require.NoError(t, NewBucket(c).Restore(s), "the restored bucket's snapshot does not restore: %s", data)
	assert.False(t, math.IsInf(b.Tokens(), 0) || math.IsNaN(b.Tokens()), "Tokens() = %v", b.Tokens())
}

// TestPersistFileAbsurdTokens: a file whose tokens are -1e308 used to give
// -Inf tokens, and then every save failed (json: unsupported value: -Inf), so
// the file was never replaced and every restart was wedged.
func TestPersistFileAbsurdTokens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "bucket.json")
		data := `{"version":1,"at":"` + time.Now().Format(time.RFC3339Nano) + `","tokens":-1e308,"limit":1,"burst":5,"learned":true}`
		require.NoError(t, os.WriteFile(path, []byte(data), 0o600))
		b := NewBucket(Config{Limit: 1, Burst: 5})
		f, err := PersistFile(b, path, time.Second)
		require.ErrorIs(t, err, ErrBadState)
		require.NotNil(t, f)
		assert.InDelta(t, 0, b.Tokens(), 1e-9, "refused: the bucket starts empty")
		require.NoError(t, f.Close(), "the bad file is replaced")

		b2 := NewBucket(Config{Limit: 1, Burst: 5})
		f2, err := PersistFile(b2, path, time.Second)
		require.NoError(t, err, "the next run resumes from the file written")
		require.NoError(t, f2.Close())
	})
}

// FuzzRestore restores arbitrary State values into buckets of a few
// configurations: a state is refused (ErrBadState) or restored, and either
// way the bucket's snapshot marshals and restores again.
func FuzzRestore(f *testing.F) {
	now := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC) // synctest's epoch
	f.Add(uint8(0), 1, int64(0), 1.0, 1.0, 5, true, 0.0, int64(0), int64(0), 0.0)
	f.Add(uint8(1), 1, int64(0), -1e308, 1.0, 5, false, 0.0, int64(0), int64(0), 0.0)
	f.Add(uint8(2), 1, int64(-time.Hour), -1e9, 1e-300, 0, true, 100.0, int64(time.Minute), int64(time.Hour), 0.0)
	f.Add(uint8(3), 1, int64(time.Hour), 3.0, 0.0, 1, true, math.Inf(1), int64(0), int64(0), 1e-300)
	f.Add(uint8(0), 1, int64(0), 2.0, 1e300, 7, false, 1e300, int64(1<<62), int64(1<<62), 1e300)
	f.Add(uint8(0), 2, int64(0), 1.0, math.MaxFloat64, 5, true, 0.0, int64(0), int64(0), 0.0)
	f.Add(uint8(3), 2, int64(0), 1.0, 0.0, 5, true, 0.0, int64(0), int64(0), 0.0)
	f.Fuzz(func(t *testing.T, config uint8, version int, at int64, tokens, limit float64, burst int, learned bool, srvLimit float64, window, cooldown int64, probeMax float64) {
		s := State{
			Version: version, At: now.Add(time.Duration(at)), Tokens: tokens, Limit: rate.Limit(limit),
			Burst: burst, Learned: learned, ServerLimit: srvLimit, Window: window, ProbeMax: probeMax,
		}
		if cooldown != 0 {
			s.CooldownUntil = now.Add(time.Duration(cooldown))
		}
		fuzzRestore(t, config, s)
	})
}

// FuzzRestoreJSON is FuzzRestore for arbitrary state files.
func FuzzRestoreJSON(f *testing.F) {
	f.Add(uint8(0), []byte(`{"version":1,"at":"2000-01-01T00:00:00Z","tokens":-1e308,"limit":1,"burst":5,"learned":true}`))
	f.Add(uint8(1), []byte(`{"version":1,"at":"2000-01-01T00:00:00Z","tokens":-1e9,"limit":1e-300,"burst":5}`))
	f.Add(uint8(2), []byte(`{"version":1,"at":"1999-12-31T23:00:00Z","tokens":0,"limit":0,"burst":0,"learned":true,"server_limit":1e308,"window_ns":9223372036854775807,"cooldown_until":"9999-12-31T23:59:59Z","probe_max":1e-300}`))
	f.Add(uint8(3), []byte(`{"version":1,"at":"0001-01-01T00:00:01Z","tokens":5}`))
	f.Add(uint8(0), []byte(`{"version":1,"at":"2000-01-01T00:00:00Z","tokens":1,"learned":true,"server_limit":10,"window_ns":9223372036854775807}`))
	f.Add(uint8(1), []byte(`{"version":2,"at":"2000-01-01T00:00:00Z","tokens":1,"limit":1.7976931348623157e+308,"burst":1,"learned":true}`))
	f.Add(uint8(2), []byte(`{"version":2,"at":"2000-01-01T00:00:00Z","tokens":1,"limit":0,"burst":1,"learned":true}`))
	f.Fuzz(func(t *testing.T, config uint8, data []byte) {
		var s State
		if json.Unmarshal(data, &s) != nil {
			return
		}
		fuzzRestore(t, config, s)
	})
}

var fuzzConfigs = []Config{
	{},
	{Limit: 1, Burst: 5},
	{Limit: 1e-300, Burst: 1, MaxCooldown: time.Hour},
	{Limit: rate.Inf, MaxCooldown: time.Second},
}

func fuzzRestore(t *testing.T, config uint8, s State) {
	c := fuzzConfigs[int(config)%len(fuzzConfigs)]
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(c)
		if err := b.Restore(s); err != nil {
			require.ErrorIs(t, err, ErrBadState, "Restore(%+v)", s)
		}
		checkSavable(t, b, c)
	})
}
