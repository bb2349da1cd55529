package throttle

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

func TestAllowRefillsFromElapsedTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 2, Burst: 3})
		for i := range 3 {
			require.True(t, b.Allow(), "Allow #%d of a full bucket of 3", i+1)
		}
		require.False(t, b.Allow(), "Allow on an empty bucket")
		require.InDelta(t, 0, b.Tokens(), 1e-9)

		time.Sleep(250 * time.Millisecond)
		assert.InDelta(t, 0.5, b.Tokens(), 1e-9, "tokens after 250ms at 2/s")
		assert.False(t, b.Allow(), "Allow with half a token")

		time.Sleep(250 * time.Millisecond)
		assert.True(t, b.Allow(), "Allow with one token")
		assert.False(t, b.Allow())

		time.Sleep(time.Hour)
		assert.Equal(t, 3.0, b.Tokens(), "tokens never exceed the burst")
		assert.True(t, b.AllowN(3))
		assert.False(t, b.AllowN(1))
	})
}

func TestAllowN(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 1, Burst: 5})
		assert.True(t, b.AllowN(0), "AllowN(0)")
		assert.False(t, b.AllowN(-1), "AllowN(-1)")
		assert.False(t, b.AllowN(6), "AllowN(burst+1)")
		assert.Equal(t, 5.0, b.Tokens(), "a refused AllowN takes nothing")
		assert.True(t, b.AllowN(4))
		assert.False(t, b.AllowN(2))
		assert.True(t, b.AllowN(1))
	})
}

func TestInfiniteLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: rate.Inf})
		for range 1000 {
			require.True(t, b.Allow())
		}
		assert.True(t, b.AllowN(math.MaxInt32))
		require.NoError(t, b.WaitN(t.Context(), 1<<40))

		b.SetLimit(1)
		assert.Equal(t, rate.Limit(1), b.Limit())
		assert.Equal(t, 1, b.Burst(), "default burst: one second's worth")
		assert.True(t, b.Allow(), "a finite limit after Inf starts full")
		assert.False(t, b.Allow())
	})
}

func TestConfigDefaultsAndValidation(t *testing.T) {
	tests := []struct {
		name      string
		c         Config
		wantBurst int
		wantErr   bool
	}{
		{"burst from limit", Config{Limit: 10}, 10, false},
		{"fractional limit rounds up", Config{Limit: 2.5}, 3, false},
		{"slow limit: at least 1", Config{Limit: 1000.0 / 3600}, 1, false},
		{"explicit burst", Config{Limit: 10, Burst: 2}, 2, false},
		{"negative burst", Config{Limit: 10, Burst: -1}, 10, true},
		{"negative limit", Config{Limit: -1}, math.MaxInt32, true},
		{"NaN limit", Config{Limit: rate.Limit(math.NaN())}, math.MaxInt32, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate()
			assert.Equal(t, tt.wantErr, err != nil, "Config%+v.Validate() = %v", tt.c, err)
			b := NewBucket(tt.c)
			assert.Equal(t, tt.wantBurst, b.Burst(), "NewBucket(%+v).Burst()", tt.c)
		})
	}
}

func TestSetLimitKeepsTokens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 1, Burst: 10})
		require.True(t, b.AllowN(6))
		b.SetLimit(4)
		assert.InDelta(t, 4, b.Tokens(), 1e-9, "tokens kept across SetLimit")
		time.Sleep(time.Second)
		assert.InDelta(t, 8, b.Tokens(), 1e-9, "refill at the new rate")

		b.SetLimit(0)
		b.SetLimit(-3)
		b.SetLimit(rate.Limit(math.NaN()))
		assert.Equal(t, rate.Limit(4), b.Limit(), "invalid limits are ignored")

		b.SetBurst(5)
		assert.InDelta(t, 5, b.Tokens(), 1e-9, "tokens capped by the new burst")
		b.SetBurst(0)
		assert.Equal(t, 4, b.Burst(), "SetBurst(0): the default for the limit")
		b.SetBurst(-1)
		assert.Equal(t, 4, b.Burst(), "negative burst ignored")
	})
}

func TestNegativeAndZeroWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 1, Burst: 1})
		require.Error(t, b.WaitN(t.Context(), -1))
		require.NoError(t, b.WaitN(t.Context(), 0))
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		err := b.Wait(ctx)
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 1.0, b.Tokens(), "a Wait with a dead context takes nothing")
	})
}

// TestSetLimitIsTheCeiling: SetLimit replaces the configured Limit as the
// ceiling, until the next SetLimit: answers lower the rate below it but
// never raise it above, and it may raise the ceiling a Config set.
func TestSetLimitIsTheCeiling(t *testing.T) {
	// answer observes a response stating a steady rate of q per second.
	answer := func(b *Bucket, q int) {
		h := http.Header{}
		h.Set("RateLimit-Policy", `"p";q=`+strconv.Itoa(q)+`;w=1`)
		h.Set("RateLimit", `"p";r=`+strconv.Itoa(q-1)+`;t=1`)
		f, err := b.Begin(context.Background())
		require.NoError(t, err)
		f.Done(&http.Response{StatusCode: 200, Header: h})
	}
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{}) // learns its rate
		answer(b, 100)
		pace := b.Limit()
		require.Greater(t, pace, rate.Limit(10), "the server's pace")
		b.SetLimit(2)
		assert.Equal(t, rate.Limit(2), b.Limit(), "lowered at once")
		time.Sleep(time.Second)
		answer(b, 100)
		assert.Equal(t, rate.Limit(2), b.Limit(), "an answer does not raise the rate above SetLimit")
		b.SetLimit(1000)
		assert.Equal(t, pace, b.Limit(), "raised, up to the server's pace")
		b.SetLimit(rate.Inf)
		assert.Equal(t, pace, b.Limit(), "no local limit: the server's pace")
	})
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 5})
		b.SetLimit(10)
		assert.Equal(t, rate.Limit(10), b.Limit(), "SetLimit raises the configured ceiling")
		answer(b, 100)
		assert.Equal(t, rate.Limit(10), b.Limit(), "the server's faster pace does not raise it further")
		time.Sleep(time.Second)
		answer(b, 4)
		assert.Less(t, b.Limit(), rate.Limit(4), "the server's slower pace lowers it")
		b.SetLimit(0)
		b.SetLimit(-1)
		assert.Less(t, b.Limit(), rate.Limit(4), "zero and negative limits are ignored")
	})
}
