package throttle

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxDrain is how much of a discarded response body a retry reads so that
// the connection can be reused.
const maxDrain = 64 << 10

// A Transport is an [http.RoundTripper] that keeps requests inside the quota
// of the server they go to. Each request waits for a token of its key's
// [Bucket] (one bucket per host unless Key says otherwise), is sent by Base,
// and its response is observed by the bucket: rate-limit headers correct it,
// and a 429 puts every caller of that key into a cooldown. One Transport
// shared by many goroutines and [http.Client]s is the single choke point for
// a quota.
//
// A request the bucket refuses (full queue, predicted wait too long for
// Config.MaxWait or the request's deadline) fails without being sent, with an
// error that matches [ErrQueueFull] or [ErrWaitTooLong] under [errors.Is],
// through the *url.Error of [http.Client] too. Every response obtained is
// returned with a nil error, 429 included, as the RoundTripper contract asks;
// retrying is opt-in (Retries).
//
// When a server names the scope a response belongs to (GitHub's
// X-RateLimit-Resource: core, search, graphql; Discord's X-RateLimit-Bucket),
// later requests to the same host and first path segment (leading "api" and
// version segments skipped) use that scope's own
// bucket, so that spending the search quota does not hold back core requests.
//
// The zero Transport is ready to use: per-host buckets that learn their quota
// from the server. A Transport must not be copied after first use; it is safe
// for concurrent use.
type Transport struct {
	// Base sends the requests. If nil, [http.DefaultTransport] is used.
	Base http.RoundTripper

	// Config is the template of every key's bucket; its Name is set to the
	// bucket's name (see TransportStats.Keys). The zero Config learns each
	// server's quota from its headers.
	Config Config

	// Key names the bucket a request waits in. If nil, requests are keyed by
	// host (req.URL.Host). A request for which Key returns "" is sent at
	// once, unthrottled and unobserved (assets, health checks).
	Key func(*http.Request) string

	// Priority, if not nil, gives each request its priority in its
	// bucket's queue (see [Priority]), in place of the one its context
	// carries ([WithPriority]); PriorityNormal if neither says.
	Priority func(*http.Request) Priority

	// Retries is how many times a response that says the client is over its
	// quota (429, 503 with Retry-After, GitHub's rate-limit 403) is retried,
	// after waiting through the cooldown it caused. Zero: never, so the
	// response reaches the caller, as the RoundTripper contract expects.
	// Retrying goes beyond that contract: only requests that can be replayed
	// (no body, or a GetBody) are retried, and the discarded response body is
	// drained (up to 64 KiB) and closed.
	Retries int

	// IdleTimeout is how long the bucket of a key that sees no requests is
	// kept. Buckets that are waited on, answered for, or cooling down are
	// kept regardless. Zero means [DefaultIdleTimeout].
	IdleTimeout time.Duration

	// Cost is how many tokens a request takes of its bucket: its cost in
	// the unit the bucket counts (see Unit), computed from the request
	// before it is sent. It must not read the body (GetBody gives a copy).
	// A cost given by [WithCost] in the request's context wins over Cost.
	// If nil, a request without WithCost costs 1. A negative cost refuses
	// the request with [ErrBadCost]; one above the bucket's burst, with
	// [ErrExceedsBurst].
	Cost func(*http.Request) int

	// Unit names the quota the buckets count, as [ParseQuotas] names it in
	// Quota.Policy: "tokens", "input-tokens", "output-tokens" (OpenAI,
	// Anthropic), an IETF policy's name or its quota unit (Quota.Unit:
	// "content-bytes"...). Each answer's headers for that
	// quota correct the bucket, and a 429 cools it down as always. Set it
	// with Cost or WithCost, and Config.Limit in the same unit per second.
	// Empty: the request quota, as [ParseHeaders] reads it.
	Unit string

	// Meters are further quotas each request is counted against, beside
	// the one its key's bucket counts: the request quota of an LLM API whose
	// bucket counts tokens (Unit "tokens"), a daily quota beside a
	// per-minute one. See [Meter]. With Meters, the requests of each bucket
	// (a key, or a scope the server names) wait in one queue, first come
	// first served (priorities are not used), bounded by Config.MaxQueue and
	// Config.MaxWait, and each goes out when every one of its quotas can take
	// its cost at once. A scope has its own queue and Meters' buckets, as it
	// has its own bucket.
	Meters []Meter

	// Refusal is how a request the bucket refuses reaches the caller:
	// [RefuseError] (the zero value), an error; or [Refuse429], a 429
	// response made up locally that tells an SDK not to retry it.
	Refusal Refusal

	// One mutex guards the maps: a lookup holds it for two map reads at
	// most. A lock-free cache of routes (BenchmarkTransportRoutesPaired)
	// saved no more than the mutex costs.
	mu      sync.Mutex
	epoch   time.Time // the origin of every bucket's clock; set once, with buckets
	buckets map[bucketID]*entry
	scopes  map[routeID]string // the scope the server named for a route
	routes  map[routeID]*entry // what each route resolved to; cleared by sweeps
	gates   map[bucketID]*gate // with Meters: the queue of each key and scope
	scoped  atomic.Bool        // scopes has had an entry: admissions re-check their bucket
	swept   instant            // when idle buckets were last swept, on the buckets' clock
}

// RoundTrip implements [http.RoundTripper].
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	key := t.key(req)
	if key == "" {
		return t.base().RoundTrip(req)
	}
	route := routeOf(key, req)
	n, cc := t.cost(req)
	// The lookup reads the clock once, for itself and for the admission.
	id, b, now := t.bucket(route)
	g, ms, err := t.meters(id, req)
	if err != nil {
		closeBody(req)
		return t.refuse(req, b, n, nil, nil, &RefusedError{Key: b.name, Err: err})
	}
	ctx := t.waitContext(req)
	a, err := t.begin(ctx, b, n, cc, now, g, ms)
	// A request admitted by the host's bucket while the first answer
	// was naming the route's scope moves to that scope's bucket (and its
	// Meters' buckets), so that they count everything they have in flight;
	// what it took of the host's is given back.
	for err == nil && id.scope == "" && t.scoped.Load() {
		nid, nb, again := t.bucket(route)
		if nb == b {
			break
		}
		a.unsent()
		id, b = nid, nb
		if g, ms, err = t.meters(id, req); err == nil {
			a, err = t.begin(ctx, b, n, cc, again, g, ms)
		}
	}
	if err != nil {
		closeBody(req)
		return t.refuse(req, b, n, g, ms, &RefusedError{Key: b.name, Err: err})
	}
	// a is the request in flight, zero once ended. If Base (or an event
	// hook) panics, the deferred call ends it and the panic goes on to the
	// caller, as net/http lets it: a bucket still learning its quota would
	// otherwise hold every later request for the answer of a request that
	// never comes, and never be dropped.
	defer func() { a.done(nil) }()
	for attempt := 0; ; attempt++ {
		resp, err := t.send(req)
		if err != nil {
			a.done(nil)
			a = admission{}
			return nil, err
		}
		// One reading of both clocks per answer: deriving the wall clock
		// from the monotonic one between readings saved about 30 ns a
		// request, within the noise of BenchmarkTransportOverhead.
		arrived := time.Now()
		var q Quota
		if t.Unit == "" {
			q = ParseHeaders(resp.Header, arrived)
		} else {
			q = unitQuota(resp.Header, arrived, t.Unit) // not the request quota's parse as well
		}
		at := sinceEpoch(arrived.Sub(t.epoch))
		done := a.f
		a.f = Flight{} // ended below, even if a hook panics
		if q.Scope != "" && q.Scope != id.scope {
			// The server says this request counts against another scope:
			// from now on its route uses that scope's bucket.
			done.Done(nil)
			id, b = t.setScope(route, q.Scope)
			b.observe(resp.StatusCode, q, nil, at)
		} else {
			done.doneAt(resp.StatusCode, q, at)
		}
		a.answerMeters(resp, arrived, at, t.Meters)
		b.limitFlights(resp.Header, arrived)
		if attempt >= t.Retries || !limited(resp.StatusCode, q) {
			return resp, nil
		}
		next, ok := replay(req)
		if !ok {
			return resp, nil
		}
		// Wait through the cooldown before giving up this response: if the
		// bucket refuses, the caller gets the response it has. (The answer
		// may have moved the route to a scope, with Meters of its own.)
		if g, ms, err = t.meters(id, next); err == nil {
			a, err = t.begin(ctx, b, n, cc, b.now(), g, ms)
		}
		if err != nil {
			closeBody(next)
			return resp, nil
		}
		discard(resp)
		req = next
	}
}

// RefusedError is the error of a request that a bucket refused without
// sending it. It matches the bucket's error ([ErrQueueFull],
// [ErrWaitTooLong], ...) under [errors.Is].
type RefusedError struct {
	Key string // the bucket's name, as in TransportStats.Keys
	Err error
}

func (e *RefusedError) Error() string {
	return "throttle: " + e.Key + ": " + strings.TrimPrefix(e.Err.Error(), "throttle: ")
}

func (e *RefusedError) Unwrap() error { return e.Err }

// send sends req by Base. A Base that breaks the RoundTripper contract is
// held to it as [http.Client] holds it: a nil response with a nil error is
// an error naming the Base, and a response that comes with an error is
// dropped, its body closed so that its connection is not leaked.
func (t *Transport) send(req *http.Request) (*http.Response, error) {
	base := t.base()
	resp, err := base.RoundTrip(req)
	switch {
	case err != nil && resp != nil:
		if resp.Body != nil {
			_ = resp.Body.Close()
		}
		return nil, err
	case err == nil && resp == nil:
		return nil, fmt.Errorf("throttle: RoundTripper implementation (%T) returned a nil *Response with a nil error", base)
	}
	return resp, err
}

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

// replay returns a copy of req to send again, if its body can be replayed.
func replay(req *http.Request) (*http.Request, bool) {
	if err := req.Context().Err(); err != nil {
		return nil, false
	}
	next := req.Clone(req.Context())
	if req.Body == nil || req.Body == http.NoBody {
		return next, true
	}
	if req.GetBody == nil {
		return nil, false
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, false
	}
	next.Body = body
	return next, true
}

// discard drains (so that the connection can be reused) and closes a
// response that will not be returned.
func discard(resp *http.Response) {
	if resp.Body == nil {
		return // a Base's shorthand for an empty body, which http.Client accepts
	}
	_, _ = io.CopyN(io.Discard, resp.Body, maxDrain)
	_ = resp.Body.Close()
}

// closeBody closes the body of a request that will not be sent, as a
// RoundTripper must.
func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

var _ http.RoundTripper = (*Transport)(nil)
