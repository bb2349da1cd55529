package throttle

import (
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Faults of a Base that breaks the RoundTripper contract: a panic, a nil
// response with a nil error, a response with an error, a nil Body. Each
// must end the request's flight, or a bucket that is learning its quota
// waits for an answer that never comes.

// TestTransportBasePanicEndsFlight: a Base that panics lets the panic go on
// to the caller, as net/http does, and the flight ends, so the next request
// to that host is sent at once and the bucket can be dropped once idle.
func TestTransportBasePanicEndsFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var panicking atomic.Bool
		panicking.Store(true)
		tr := &Transport{IdleTimeout: time.Minute, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if panicking.Load() {
				panic("base exploded")
			}
			return newResponse(r, http.StatusOK, nil, ""), nil
		})}
		req, _ := http.NewRequest("GET", "http://api.test/", nil)
		require.PanicsWithValue(t, "base exploded", func() { _, _ = tr.RoundTrip(req) })
		st := tr.Stats().Keys["api.test"]
		assert.Equal(t, 0, st.InFlight, "Stats().InFlight after Base panicked")
		assert.True(t, st.Learning, "no answer: still learning")

		panicking.Store(false)
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err, "the next request probes: it is not held for the panicked one's answer")
		resp.Body.Close()
		assert.Zero(t, time.Since(start), "the next request waited")

		time.Sleep(2 * time.Minute) // idle beyond IdleTimeout
		other, _ := http.NewRequest("GET", "http://other.test/", nil)
		resp, err = tr.RoundTrip(other) // a lookup under the lock sweeps
		require.NoError(t, err)
		resp.Body.Close()
		_, kept := tr.Stats().Keys["api.test"]
		assert.False(t, kept, "the idle bucket is dropped: nothing is in flight")
	})
}
