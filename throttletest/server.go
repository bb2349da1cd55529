package throttletest

import (
	"net/http/httptest"
	"testing"
)

// Server is a [Handler] listening on a loopback address with a random port.
// Its URL is the base URL of the fake API, and its Client method returns a
// client that reaches it; the Handler's methods (Stats...) are promoted.
//
// The caller must call Close when done with it, or use [NewTestServer].
type Server struct {
	*httptest.Server
	*Handler
}

// NewServer starts a Server for c on a loopback address. The caller must
// Close it.
func NewServer(c Config) *Server {
	h := NewHandler(c)
	return &Server{Server: httptest.NewServer(h), Handler: h}
}

// NewTestServer is [NewServer], closed when tb's test and its subtests
// finish.
func NewTestServer(tb testing.TB, c Config) *Server {
	tb.Helper()
	s := NewServer(c)
	tb.Cleanup(s.Close)
	return s
}
