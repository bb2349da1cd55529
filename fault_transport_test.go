package throttle

import (
	"errors"
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

// TestTransportBaseNilResponse: a Base returning (nil, nil) is an error
// naming the Base's type, as http.Client reports it, and ends the flight.
func TestTransportBaseNilResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{Base: roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, nil })}
		req, _ := http.NewRequest("GET", "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		require.Error(t, err)
		assert.Nil(t, resp)
		assert.Contains(t, err.Error(), "throttle.roundTripFunc", "the error names the Base's type")
		assert.Equal(t, 0, tr.Stats().Keys["api.test"].InFlight)
		_, err = tr.RoundTrip(req)
		assert.NotErrorIs(t, err, ErrWaitTooLong, "the next request was sent, not held")
	})
}

// TestTransportBaseResponseAndError: a Base returning a response and an
// error: the error is returned, the response's body closed, the flight
// ended.
func TestTransportBaseResponseAndError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("half a response")
		var body *trackedBody
		tr := &Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp := newResponse(r, http.StatusOK, nil, "partial")
			body = resp.Body.(*trackedBody)
			return resp, boom
		})}
		req, _ := http.NewRequest("GET", "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		require.ErrorIs(t, err, boom)
		assert.Nil(t, resp, "no response with an error")
		assert.True(t, body.closed.Load(), "the ignored response's body is closed")
		assert.Equal(t, 0, tr.Stats().Keys["api.test"].InFlight)
	})
}

// TestTransportRetryNilBody: a 429 with a nil Body is retried without a
// panic in the drain.
func TestTransportRetryNilBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		tr := &Transport{Retries: 1, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calls++
			h := http.Header{"Retry-After": {"1"}}
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: h, Request: r}, nil
		})}
		req, _ := http.NewRequest("GET", "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		assert.Equal(t, 2, calls, "sent, drained, sent again")
		assert.Equal(t, 0, tr.Stats().Keys["api.test"].InFlight)
	})
}
