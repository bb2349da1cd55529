package throttle

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"golang.org/x/time/rate"
)

// TestConfigValidate: Validate names every invalid field, one error each,
// and accepts every value a field documents as meaningful.
func TestConfigValidate(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		c    Config
		bad  []string // the fields reported, in order
	}{
		{"zero", Config{}, nil},
		{"every field meaningful", Config{Limit: 10, Burst: 5, MaxQueue: 3, MaxWait: time.Second, MaxInFlight: 4, Pace: PaceBurst, Name: "x", SlowWait: time.Second, StoreShare: 1, MaxCooldown: time.Minute}, nil},
		{"negative queue and wait mean never wait, no limit", Config{MaxQueue: -1, MaxWait: -1}, nil},
		{"no local limit", Config{Limit: rate.Inf}, nil},
		{"smallest share", Config{StoreShare: math.SmallestNonzeroFloat64}, nil},
		{"negative limit", Config{Limit: -1}, []string{"Limit"}},
		{"NaN limit", Config{Limit: rate.Limit(nan)}, []string{"Limit"}},
		{"negative burst", Config{Burst: -1}, []string{"Burst"}},
		{"negative in-flight limit", Config{MaxInFlight: -1}, []string{"MaxInFlight"}},
		{"unknown pace", Config{Pace: 7}, []string{"Pace"}},
		{"negative pace", Config{Pace: -1}, []string{"Pace"}},
		{"negative slow wait", Config{SlowWait: -time.Second}, []string{"SlowWait"}},
		{"share above 1", Config{StoreShare: 1.5}, []string{"StoreShare"}},
		{"negative share", Config{StoreShare: -0.5}, []string{"StoreShare"}},
		{"NaN share", Config{StoreShare: nan}, []string{"StoreShare"}},
		{"negative cooldown", Config{MaxCooldown: -1}, []string{"MaxCooldown"}},
		{"all at once", Config{Limit: -1, Burst: -1, MaxInFlight: -1, Pace: 2, SlowWait: -1, StoreShare: 2, MaxCooldown: -1},
			[]string{"Limit", "Burst", "MaxInFlight", "Pace", "SlowWait", "StoreShare", "MaxCooldown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate()
			if tt.bad == nil {
				assert.NoError(t, err, "Config%+v.Validate()", tt.c)
				return
			}
			if !assert.Error(t, err, "Config%+v.Validate()", tt.c) {
				return
			}
			lines := strings.Split(err.Error(), "\n")
			var fields []string
			for _, l := range lines {
				assert.True(t, strings.HasPrefix(l, "throttle: Config."), "Validate() error %q: want one per field, each naming it", l)
				f, _, _ := strings.Cut(strings.TrimPrefix(l, "throttle: Config."), " ")
				fields = append(fields, f)
			}
			assert.Equal(t, tt.bad, fields, "Config%+v.Validate() = %v", tt.c, err)
		})
	}
}

// TestConfigInvalidTreatedAsZero: NewBucket treats each invalid field as
// its zero value, as the field documents.
func TestConfigInvalidTreatedAsZero(t *testing.T) {
	b := NewBucket(Config{Limit: 10, Burst: -1, SlowWait: -1, StoreShare: math.NaN(), MaxCooldown: -1})
	z := NewBucket(Config{Limit: 10})
	assert.Equal(t, z.Burst(), b.Burst(), "Burst -1")
	assert.Equal(t, z.slowWait, b.slowWait, "SlowWait -1")
	assert.Equal(t, z.maxCooldown, b.maxCooldown, "MaxCooldown -1")
	s := NewBucket(Config{Limit: 10, Store: newMemStore(), StoreShare: math.NaN()})
	assert.Equal(t, DefaultStoreShare, s.share, "StoreShare NaN")
}
