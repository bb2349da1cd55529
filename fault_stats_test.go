package throttle

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStatsGrantedThenCancelled: a waiter granted its tokens as its context
// ended gives them back; it is counted once, as cancelled, not as admitted
// too.
func TestStatsGrantedThenCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBucket(Config{Limit: 1, Burst: 3})
		require.True(t, b.AllowN(3))
		ctx, cancel := context.WithCancel(t.Context())
		b.mu.Lock()
		now := b.own()
		w, err := b.enqueue(ctx, now, 2)
		require.NoError(t, err)
		require.NotNil(t, w)
		b.release(now)
		b.mu.Unlock()

		time.Sleep(2 * time.Second)
		synctest.Wait() // the timer granted the waiter
		require.True(t, w.done)
		cancel()
		require.ErrorIs(t, b.cancel(ctx, w), context.Canceled)

		st := b.Stats()
		assert.Equal(t, uint64(1), st.Admitted, "Admitted: the AllowN only")
		assert.Equal(t, uint64(0), st.Waited, "Waited")
		assert.Equal(t, time.Duration(0), st.WaitTime, "WaitTime")
		assert.Equal(t, uint64(1), st.Canceled, "Canceled")
	})
}
