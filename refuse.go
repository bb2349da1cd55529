package throttle

import (
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Refusal is how a [Transport] answers a request its bucket refuses; see
// Transport.Refusal. Values other than the constants below are RefuseError.
type Refusal int

const (
	// RefuseError returns the refusal as an error, a [*RefusedError] that
	// matches [ErrQueueFull], [ErrWaitTooLong], ... under [errors.Is]. SDKs
	// with retry loops of their own (openai-go, anthropic-sdk-go) take it
	// for a connection error and retry it.
	RefuseError Refusal = iota

	// Refuse429 answers with a response made up locally, never sent to the
	// server nor observed by the bucket: status 429, Retry-After the
	// predicted wait in seconds, rounded up (left out when no wait would
	// help), X-Should-Retry: false, which the Stainless-built SDKs
	// (openai-go, anthropic-sdk-go) obey by returning at once, and
	// [RefusedHeader] naming the reason. Its body, the refusal's error
	// message, is plain text. Use it for SDKs that retry errors; a caller
	// tells it from the server's 429 by RefusedHeader.
	Refuse429
)

// RefusedHeader is the header of a [Refuse429] response: the reason the
// request was refused locally, one of "queue-full", "wait-too-long",
// "exceeds-burst" and "bad-cost".
const RefusedHeader = "Throttle-Refused"

// refuse answers a request that b refused with err (b and the key's gate g
// with the Meters' costs ms, when the Transport has Meters): err itself, or
// with Refuse429 a 429 response, when err is a refusal rather than the end
// of the request's context.
func (t *Transport) refuse(req *http.Request, b *Bucket, n int, g *gate, ms []meterCost, err *RefusedError) (*http.Response, error) {
	reason := refusalReason(err.Err)
	if t.Refusal != Refuse429 || reason == "" {
		return nil, err
	}
	msg := err.Error()
	h := http.Header{
		"Content-Type":   {"text/plain; charset=utf-8"},
		"X-Should-Retry": {"false"},
		RefusedHeader:    {reason},
	}
	if reason == "queue-full" || reason == "wait-too-long" {
		wait := b.predict(n)
		if g != nil {
			wait = g.predict(b, n, ms)
		}
		if wait < math.MaxInt32*time.Second {
			h.Set("Retry-After", strconv.FormatInt(int64((wait+time.Second-1)/time.Second), 10))
		}
	}
	return &http.Response{
		Status:        "429 Too Many Requests",
		StatusCode:    http.StatusTooManyRequests,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(strings.NewReader(msg)),
		ContentLength: int64(len(msg)),
		Request:       req,
	}, nil
}

// refusalReason names err for RefusedHeader, "" when err is not the
// bucket's refusal (the request's context ended).
func refusalReason(err error) string {
	switch {
	case errors.Is(err, ErrBadCost):
		return "bad-cost"
	case errors.Is(err, ErrExceedsBurst):
		return "exceeds-burst"
	case errors.Is(err, ErrQueueFull):
		return "queue-full"
	case errors.Is(err, ErrWaitTooLong):
		return "wait-too-long"
	}
	return ""
}

// predict returns how long a caller asking for n tokens would wait now,
// behind those queued.
func (b *Bucket) predict(n int) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.ownLocked()
	defer b.releaseLocked(now)
	return dur(b.plannedLocked(now, b.q.tokens+n).sub(now))
}
