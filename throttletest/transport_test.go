package throttletest_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-throttle/throttle/throttletest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRoundTripResponse(t *testing.T) {
	h := throttletest.NewHandler(throttletest.Config{})
	body := &closeTracker{Reader: strings.NewReader("ignored")}
	req, err := http.NewRequest(http.MethodPost, "http://api.test/repos?page=2", body)
	require.NoError(t, err)
	req.Header.Set("X-Test", "1")
	before := req.Clone(context.Background())

	resp, err := h.RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)

	assert.JSONEq(t, `{"ok":true,"resource":"core"}`, string(got))
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "200 OK", resp.Status)
	assert.Equal(t, "HTTP/1.1", resp.Proto)
	assert.Equal(t, 1, resp.ProtoMajor)
	assert.Equal(t, 1, resp.ProtoMinor)
	assert.Equal(t, int64(len(got)), resp.ContentLength)
	assert.Equal(t, "application/json; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Equal(t, "9", resp.Header.Get("X-RateLimit-Remaining"))
	assert.Same(t, req, resp.Request)

	assert.True(t, body.closed, "request body closed")
	assert.Equal(t, before.URL, req.URL, "request URL untouched")
	assert.Equal(t, before.Header, req.Header, "request header untouched")
	assert.Empty(t, req.RequestURI, "request RequestURI untouched")
	assert.Empty(t, req.RemoteAddr, "request RemoteAddr untouched")
}

// TestRoundTripServerRequest checks that Config.Handler and Config.Route see
// a request as a server would.
func TestRoundTripServerRequest(t *testing.T) {
	type seen struct {
		method, requestURI, host, remoteAddr, body string
	}
	var route, served seen
	look := func(r *http.Request) seen {
		return seen{method: r.Method, requestURI: r.RequestURI, host: r.Host, remoteAddr: r.RemoteAddr}
	}
	h := throttletest.NewHandler(throttletest.Config{
		Route: func(r *http.Request) string {
			route = look(r)
			return "items"
		},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			served = look(r)
			b, _ := io.ReadAll(r.Body)
			served.body = string(b)
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, "created") //nolint:errcheck // in memory
		}),
	})
	req, err := http.NewRequest(http.MethodPost, "http://api.test/items?x=1", strings.NewReader("hello"))
	require.NoError(t, err)
	resp, err := h.RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)

	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	assert.Equal(t, "201 Created", resp.Status)
	assert.Equal(t, "created", string(got))
	assert.Equal(t, int64(7), resp.ContentLength)
	assert.Equal(t, "items", resp.Header.Get("X-RateLimit-Resource"), "headers set before Config.Handler")
	want := seen{method: http.MethodPost, requestURI: "/items?x=1", host: "api.test", remoteAddr: "192.0.2.1:1234"}
	assert.Equal(t, want, route, "request seen by Route")
	want.body = "hello"
	assert.Equal(t, want, served, "request seen by Handler")
}

func TestRoundTripHead(t *testing.T) {
	h := throttletest.NewHandler(throttletest.Config{})
	resp, body := send(t, h, http.MethodHead, "http://api.test/")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, body)
}

func TestLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := throttletest.NewHandler(throttletest.Config{Latency: 2 * time.Second})
		start := time.Now()
		resp, _ := get(t, h, "/")
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, 2*time.Second, time.Since(start), "answer delayed by Latency")
		assert.Equal(t, "Sat, 01 Jan 2000 00:00:00 GMT", resp.Header.Get("Date"), "headers describe the arrival")
	})
}

func TestLatencyCancel(t *testing.T) {
	cases := []struct {
		name    string
		timeout time.Duration // of the request's context; 0: canceled before sending
		want    error
		counted throttletest.Counts
	}{
		{"during Latency", 500 * time.Millisecond, context.DeadlineExceeded, throttletest.Counts{Admitted: 1}},
		{"before sending", 0, context.Canceled, throttletest.Counts{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := throttletest.NewHandler(throttletest.Config{Latency: 2 * time.Second})
				var (
					ctx    context.Context
					cancel context.CancelFunc
				)
				if tc.timeout > 0 {
					ctx, cancel = context.WithTimeout(t.Context(), tc.timeout)
				} else {
					ctx, cancel = context.WithCancel(t.Context())
					cancel()
				}
				defer cancel()
				body := &closeTracker{Reader: strings.NewReader("x")}
				req, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://api.test/", body)
				require.NoError(t, err)

				start := time.Now()
				resp, err := h.RoundTrip(req)
				assert.Nil(t, resp, "response")
				assert.ErrorIs(t, err, tc.want)
				assert.Equal(t, tc.timeout, time.Since(start), "RoundTrip returned when the context ended")
				assert.True(t, body.closed, "request body closed")
				assert.Equal(t, tc.counted, h.Stats().Counts, "Stats")
			})
		})
	}
}
