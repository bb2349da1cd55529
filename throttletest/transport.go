package throttletest

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
)

// RoundTrip answers req in memory by calling [Handler.ServeHTTP] on the
// caller's goroutine, with no network and no goroutine, so that a client
// whose Transport is h runs entirely inside a testing/synctest bubble, in
// virtual time:
//
//	client := &http.Client{Transport: h}
//
// The handler sees a server-side copy of req (RequestURI, RemoteAddr and Host
// set, as net/http sets them); req itself is not modified, and its body is
// closed. The response is complete (status, headers, body, ContentLength,
// Request) and its body is already in memory.
//
// If req's context is done before the handler is called, or while the
// answer waits (Config.Latency, Config.Jitter, a LeakyBucket's delay),
// RoundTrip returns an error wrapping the context's error and no response;
// in the second case the request has been counted, as a real server would
// have counted it.
func (h *Handler) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	if req.URL == nil {
		return nil, errors.New("throttletest: nil Request.URL")
	}
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("throttletest: %w", err)
	}

	sreq := req.Clone(ctx)
	sreq.Proto, sreq.ProtoMajor, sreq.ProtoMinor = "HTTP/1.1", 1, 1
	sreq.RequestURI = req.URL.RequestURI()
	sreq.RemoteAddr = "192.0.2.1:1234" // TEST-NET-1, as httptest.NewRequest uses
	if sreq.Host == "" {
		sreq.Host = req.URL.Host
	}
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}

	rec := httptest.NewRecorder()
	if !h.serve(rec, sreq) {
		return nil, fmt.Errorf("throttletest: %w", ctx.Err())
	}

	resp := rec.Result()
	resp.Request = req
	resp.ContentLength = int64(rec.Body.Len())
	if req.Method == http.MethodHead {
		resp.Body = http.NoBody
	}
	return resp, nil
}
