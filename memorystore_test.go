package throttle

import (
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// The MemoryStore keeps redisstore's semantics, exactly, in virtual time.
func TestMemoryStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s MemoryStore
		ctx := t.Context()
		take := func(n int, limit float64) time.Duration {
			t.Helper()
			d, err := s.Take(ctx, "k", n, rate.Limit(limit), 10)
			require.NoError(t, err)
			return d
		}
		correct := func(c Correction) {
			t.Helper()
			c.Burst = 10
			if c.Limit == 0 {
				c.Limit = 10
			}
			require.NoError(t, s.Correct(ctx, "k", c))
		}

		// A new bucket is full; one emptied waits for its refill.
		assert.Zero(t, take(10, 10))
		assert.Equal(t, 100*time.Millisecond, take(1, 10))

		// A correction means the same count at every rate: 2 tokens
		// left, at 1/s or at 4/s.
		time.Sleep(10 * time.Second) // full again, at 1/s too
		correct(Correction{Limit: 1, SetTokens: true, Tokens: 2})
		assert.Zero(t, take(2, 4))
		assert.Equal(t, 250*time.Millisecond, take(1, 4))

		// A spent hold holds, and does not refill meanwhile: the first
		// token comes a tenth of a second after it.
		time.Sleep(3 * time.Second)
		correct(Correction{SetTokens: true, Tokens: 0, Spent: 2 * time.Second, Sent: time.Millisecond})
		assert.Equal(t, 2100*time.Millisecond, take(1, 10))
		// An answer to a request sent before it only lengthens it...
		correct(Correction{SetTokens: true, Tokens: 5, Sent: time.Minute})
		assert.Equal(t, 2100*time.Millisecond, take(1, 10))
		correct(Correction{SetTokens: true, Tokens: 5, Spent: 3 * time.Second, Sent: time.Minute})
		assert.Equal(t, 3100*time.Millisecond, take(1, 10))
		// ...and one to a request sent since replaces it: ended, the
		// tokens refill from now.
		time.Sleep(time.Second)
		correct(Correction{SetTokens: true, Tokens: 5, Sent: time.Millisecond})
		assert.Equal(t, 100*time.Millisecond, take(1, 10), "0 tokens, none refilled while held")

		// At rate.Inf an answer leaves the tokens alone, but still
		// replaces the spent hold; a hold alone replaces nothing.
		time.Sleep(time.Second)
		correct(Correction{SetTokens: true, Tokens: 0, Spent: 2 * time.Second, Sent: time.Millisecond})
		time.Sleep(10 * time.Millisecond)
		correct(Correction{Hold: time.Millisecond, Sent: time.Millisecond})
		assert.Equal(t, 2090*time.Millisecond, take(1, 10))
		time.Sleep(10 * time.Millisecond)
		correct(Correction{Limit: rate.Inf, SetTokens: true, Tokens: 5, Sent: time.Millisecond})
		assert.Equal(t, 100*time.Millisecond, take(1, 10), "ended, the refill no longer put off")

		// A refusal's hold is not replaced, and the bucket does not refill
		// while it lasts.
		time.Sleep(time.Second) // full again
		assert.Zero(t, take(10, 10))
		correct(Correction{Hold: time.Second})
		correct(Correction{SetTokens: true, Tokens: 10, Sent: time.Millisecond})
		assert.Equal(t, 1100*time.Millisecond, take(1, 10), "the hold, then a token's refill")
		time.Sleep(time.Second)
		assert.Equal(t, 100*time.Millisecond, take(1, 10))
	})
}

// Bad input is refused with an error, and changes nothing.
func TestMemoryStoreInvalid(t *testing.T) {
	var s MemoryStore
	ctx := t.Context()
	for _, tt := range []struct {
		n     int
		limit rate.Limit
		burst int
	}{{0, 1, 1}, {1, 0, 1}, {1, -1, 1}, {1, rate.Limit(math.NaN()), 1}, {2, 1, 1}} {
		_, err := s.Take(ctx, "k", tt.n, tt.limit, tt.burst)
		assert.Error(t, err, "Take(%d, %v, %d)", tt.n, tt.limit, tt.burst)
	}
	_, err := s.Take(ctx, "k", 2, 1, 1)
	assert.ErrorIs(t, err, ErrExceedsBurst)
	for _, c := range []Correction{
		{SetTokens: true, Limit: 0, Burst: 1},
		{SetTokens: true, Limit: 1, Burst: 0},
		{SetTokens: true, Limit: 1, Burst: 1, Tokens: math.NaN()},
	} {
		assert.Error(t, s.Correct(ctx, "k", c), "Correct(%+v)", c)
	}
	d, err := s.Take(ctx, "k", 1, 1, 1)
	require.NoError(t, err)
	assert.Zero(t, d, "nothing changed: still full")
}
