package throttle

import (
	"context"
	"net/http"
	"strings"
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
		now := b.ownLocked()
		w, _, err := b.enqueueLocked(ctx, now, 2, false)
		require.NoError(t, err)
		require.NotNil(t, w)
		b.releaseLocked(now)
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

// TestTransportStatsKeysDistinct: a key that contains "#" is not taken for
// another key's server-named scope: key "h#core" and key "h" with scope
// "core" are two buckets, and Stats shows both.
func TestTransportStatsKeysDistinct(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{
			Key: func(r *http.Request) string {
				if strings.HasPrefix(r.URL.Path, "/hash/") {
					return "h#core"
				}
				return "h"
			},
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				h := http.Header{}
				h.Set("X-RateLimit-Limit", "100")
				h.Set("X-RateLimit-Remaining", "99")
				h.Set("X-RateLimit-Reset", "60")
				if !strings.HasPrefix(r.URL.Path, "/hash/") {
					h.Set("X-RateLimit-Resource", "core")
				}
				return newResponse(r, http.StatusOK, h, ""), nil
			}),
		}
		get := func(path string) {
			req, _ := http.NewRequest("GET", "http://api.test"+path, nil)
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			resp.Body.Close()
		}
		get("/hash/x")
		get("/plain/x") // names scope core: from now on /plain uses h#core's scope bucket
		get("/plain/x")
		st := tr.Stats()
		names := make([]string, 0, len(st.Keys))
		for k := range st.Keys {
			names = append(names, k)
		}
		assert.Len(t, st.Keys, 3, "buckets: the key h#core, the key h, h's scope core; got %q", names)
		var sum uint64
		for _, s := range st.Keys {
			sum += s.Admitted
		}
		assert.Equal(t, st.Total.Admitted, sum, "Total sums what Keys shows")
		assert.Equal(t, uint64(1), st.Keys[`h\#core`].Admitted, "the key h#core, escaped")
		assert.Equal(t, uint64(1), st.Keys["h#core"].Admitted, "the key h's scope core")
	})
}
