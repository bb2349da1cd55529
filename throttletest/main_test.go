package throttletest_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// send sends one request through rt, as an http.Client would, and returns
// the response and its body, already read and closed.
func send(t *testing.T, rt http.RoundTripper, method, target string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, target, nil)
	require.NoError(t, err)
	resp, err := (&http.Client{Transport: rt}).Do(req)
	require.NoError(t, err, "%s %s", method, target)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

// get is send for a GET of http://api.test + path.
func get(t *testing.T, rt http.RoundTripper, path string) (*http.Response, string) {
	t.Helper()
	return send(t, rt, http.MethodGet, "http://api.test"+path)
}

// headers returns the response's rate-limit headers and Date, with
// lower-case names: everything but the content headers.
func headers(resp *http.Response) map[string]string {
	m := make(map[string]string)
	for k, v := range resp.Header {
		switch k {
		case "Content-Type", "Content-Length", "X-Content-Type-Options":
			continue
		}
		m[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	return m
}

// closeTracker is a request body that records whether it was closed.
type closeTracker struct {
	io.Reader
	closed bool
}

func (c *closeTracker) Close() error {
	c.closed = true
	return nil
}

// status sends a GET of http://api.test + path through rt and returns the
// response's status code, or 0 if there was none. Unlike get, it may be
// called from any goroutine.
func status(rt http.RoundTripper, path string) int {
	resp, err := (&http.Client{Transport: rt}).Get("http://api.test" + path)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body) //nolint:errcheck // in memory
	return resp.StatusCode
}
