package throttletest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Handler is a fake rate-limited HTTP API. Every request counts against the
// [Quota] of one resource (chosen by Config.Route); a request within the
// quota is answered by Config.Handler, one beyond it is refused with 429 (or
// Config.RefuseStatus). Every response, admitted or refused, carries the
// rate-limit headers of Config.Dialect and a Date header. On demand the
// handler also sheds load (503), enforces a GitHub-style secondary limit
// (403), lies in its headers (Hostile), runs a skewed clock (DateSkew),
// rounds as real servers do (ResetRounding, RetryAfterWindow) and answers
// slowly and out of order (Latency, Jitter). [Handler.Stats] counts what it
// answered.
//
// The quota is derived from time.Now at each request: no timers, no
// goroutines. Windows are aligned to the handler's start (the call to
// [NewHandler]) unless Quota.Align or Config.Phase say otherwise, so inside
// a testing/synctest bubble every value is exact. Create the handler in the
// bubble that uses it.
//
// Handler is an [http.Handler] for [httptest.NewServer] (see [NewServer])
// and an [http.RoundTripper] that calls itself in memory (see
// [Handler.RoundTrip]). The zero Handler is the API of the zero [Config],
// whose clock starts at its first request. A Handler is safe for concurrent
// use by multiple goroutines.
type Handler struct {
	cfg Config // normalized by NewHandler; read-only afterwards

	mu         sync.Mutex
	started    bool
	start      time.Time
	counters   map[string]*counter
	total      Counts
	series     []Point
	inflight   int             // admitted requests being served
	admissions []time.Duration // admission times within the last minute, for Secondary.PerMinute
	candidates int             // requests the limits would admit, for ShedEvery
	jitter     *rand.Rand      // draws Config.Jitter; nil without it
	tokens     []*tokenCounter // Config.Tokens
}

// NewHandler returns a Handler for c, its clock started now.
//
// NewHandler panics if c holds an unknown Dialect, Algorithm, Alignment,
// Rounding or DateFormat, a Quota option its Algorithm does not have, or a
// status code outside 400-599: those are mistakes in the test, not server
// behaviours.
func NewHandler(c Config) *Handler {
	c.Quota = c.Quota.normalize()
	res := make(map[string]Quota, len(c.Resources))
	for name, q := range c.Resources {
		res[name] = q.normalize()
	}
	c.Resources = res
	switch {
	case c.Dialect < GitHub || c.Dialect > Bucket4j:
		panic(fmt.Sprintf("throttletest: unknown %v", c.Dialect))
	case c.ResetRounding < RoundUp || c.ResetRounding > NextSecond:
		panic(fmt.Sprintf("throttletest: unknown %v", c.ResetRounding))
	case c.DateFormat < IMFFixdate || c.DateFormat > RFC1123Z:
		panic(fmt.Sprintf("throttletest: unknown %v", c.DateFormat))
	}
	checkStatus("Config.RefuseStatus", c.RefuseStatus)
	checkStatus("Config.Secondary.Status", c.Secondary.Status)
	h := &Handler{cfg: c, started: true, start: time.Now()}
	h.tokens = newTokenCounters(c, h.boundary)
	if c.Jitter > 0 {
		h.jitter = rand.New(rand.NewPCG(c.Seed, c.Seed))
	}
	return h
}

func checkStatus(field string, code int) {
	if code != 0 && (code < 400 || code > 599) {
		panic(fmt.Sprintf("throttletest: %s %d is not an error status", field, code))
	}
}

// Counts are the answers a Handler gave, by kind.
type Counts struct {
	Admitted  int // within every limit: answered by Config.Handler
	Refused   int // beyond the quota: 429, or Config.RefuseStatus
	Secondary int // beyond Config.Secondary: 403, or its Status
	Shed      int // shed by Config.ShedEvery: 503
}

// Total is the number of requests counted.
func (c Counts) Total() int { return c.Admitted + c.Refused + c.Secondary + c.Shed }

func (c *Counts) add(o outcome) {
	switch o {
	case admitted:
		c.Admitted++
	case refused:
		c.Refused++
	case secondary:
		c.Secondary++
	case shed:
		c.Shed++
	}
}

// Point is what a Handler answered during one second.
type Point struct {
	Second int // seconds since the handler's start: the interval [Second, Second+1)
	Counts
}

// Stats is a snapshot of what a Handler answered. A request is counted when
// it arrives, before its answer waits (Config.Latency, Config.Jitter, a
// LeakyBucket's delay): one whose client gave up during the wait is counted
// all the same.
type Stats struct {
	Counts                      // all resources together
	Resources map[string]Counts // per resource, for each resource that saw a request
	Series    []Point           // per second, in order; seconds without requests are left out
	// Tokens holds the tokens each of Config.Tokens counted, by name:
	// those charged to admitted requests, less those given back.
	Tokens map[string]int64
}

// Stats returns what h has answered so far.
func (h *Handler) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := Stats{
		Counts:    h.total,
		Resources: make(map[string]Counts, len(h.counters)),
		Series:    slices.Clone(h.series),
	}
	for name, c := range h.counters {
		s.Resources[name] = c.counts
	}
	if len(h.tokens) > 0 {
		s.Tokens = make(map[string]int64, len(h.tokens))
		for _, tc := range h.tokens {
			s.Tokens[tc.name] += tc.counted
		}
	}
	return s
}

// outcome is how a request was answered.
type outcome int

const (
	admitted outcome = iota
	refused
	secondary
	shed
)

// decision is everything needed to answer one request.
type decision struct {
	outcome   outcome
	resource  string
	limit     int64 // as stated (counter.stated)
	remaining int64
	perWindow int64 // the quota's Limit
	burst     int64 // the buckets' capacity
	window    time.Duration
	now       time.Time     // the server's real (unskewed) time
	reset     time.Time     // when the quota resets, real time
	retry     time.Duration // how long a refused or shed client should wait
	wait      time.Duration // how long the answer takes: latency, jitter, leaky-bucket delay
	elapsed   time.Duration // when it was decided, since the handler's start
	tokens    []tokenReport // Config.Tokens, after the request
}

// ServeHTTP counts r against its resource's quota and answers it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.serve(w, r)
}

// serve is ServeHTTP. It reports false if r's context ended while the
// answer waited (decision.wait), in which case nothing was written.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request) (answered bool) {
	name := DefaultResource
	if h.cfg.Route != nil {
		name = cmp.Or(h.cfg.Route(r), DefaultResource)
	}
	var ch chat
	if len(h.tokens) > 0 {
		var err error
		if ch, err = h.readChat(r); err != nil {
			http.Error(w, "throttletest: not a chat request: "+err.Error(), http.StatusBadRequest)
			return true
		}
	}
	d := h.decide(name, ch)
	if d.outcome == admitted {
		defer h.release()
		if len(h.tokens) > 0 {
			defer h.settle(ch, d.elapsed)
		}
	}
	h.setHeaders(w.Header(), d)
	if !h.delay(r.Context(), d.wait) {
		return false
	}
	switch d.outcome {
	case admitted:
		if h.cfg.Handler != nil {
			h.cfg.Handler.ServeHTTP(w, r)
			break
		}
		if len(h.tokens) > 0 {
			h.writeChat(w, ch)
			break
		}
		writeJSON(w, http.StatusOK, okBody{OK: true, Resource: name})
	case refused:
		code := cmp.Or(h.cfg.RefuseStatus, http.StatusTooManyRequests)
		if h.cfg.Dialect != GitHub {
			http.Error(w, "rate limit exceeded", code)
			break
		}
		writeJSON(w, code, githubError{
			Message: "API rate limit exceeded for resource " + name + ".",
			DocURL:  githubDocs + "#about-primary-rate-limits",
		})
	case secondary:
		writeJSON(w, cmp.Or(h.cfg.Secondary.Status, http.StatusForbidden), githubError{
			Message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
			DocURL:  githubDocs + "#about-secondary-rate-limits",
		})
	case shed:
		http.Error(w, "service unavailable: shedding load", http.StatusServiceUnavailable)
	}
	return true
}

const githubDocs = "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api"

type okBody struct {
	OK       bool   `json:"ok"`
	Resource string `json:"resource"`
}

// githubError is the body of GitHub's rate-limit refusals; go-github tells a
// secondary limit from its documentation_url.
type githubError struct {
	Message string `json:"message"`
	DocURL  string `json:"documentation_url"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only fixed types are written
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(b) // an error means the client is gone: nothing to do
}

// decide counts one request for resource name, the chat ch, at the current
// time.
func (h *Handler) decide(name string, ch chat) decision {
	h.mu.Lock()
	defer h.mu.Unlock()
	// Read the clock under the lock, so that every counter sees time move
	// forward only.
	now := time.Now()
	if !h.started {
		h.started, h.start = true, now
	}
	e := max(now.Sub(h.start), 0)
	ce := h.clock(e)

	c := h.counters[name]
	if c == nil {
		q, ok := h.cfg.Resources[name]
		if !ok {
			q = h.cfg.Quota
		}
		c = newCounter(q, h.boundary(q.normalize()))
		if h.counters == nil {
			h.counters = make(map[string]*counter)
		}
		h.counters[name] = c
	}
	c.advance(ce)

	d := decision{resource: name, limit: c.stated(), perWindow: c.limit, burst: c.burst, window: c.q.Window,
		now: now, wait: h.cfg.Latency, elapsed: e}
	tokensOK, tokensRetry := h.tokensLocked(e, ch)
	switch {
	case !c.allows(ce):
		d.outcome = refused
		c.refuse(ce)
	case !tokensOK:
		d.outcome = refused
		c.refuse(ce)
	case h.secondaryLocked(e, &d.retry):
		d.outcome = secondary
	case h.shedLocked():
		d.outcome = shed
		d.retry = cmp.Or(h.cfg.ShedRetryAfter, time.Second)
	default:
		d.outcome = admitted
		c.take()
		h.takeTokensLocked(ch)
		d.wait += c.delay()
		h.inflight++
		if h.cfg.Secondary.PerMinute > 0 {
			h.admissions = append(h.admissions, e)
		}
	}
	remaining, reset, retry := c.report(ce)
	d.remaining, d.reset = remaining, h.start.Add(reset)
	if d.outcome == refused {
		d.retry = max(retry, tokensRetry)
		if h.cfg.RetryAfterWindow {
			d.retry = c.q.Window
		}
	}
	d.tokens = h.reportTokensLocked(e)
	if h.jitter != nil {
		d.wait += time.Duration(h.jitter.Int64N(int64(h.cfg.Jitter)))
	}

	c.counts.add(d.outcome)
	h.total.add(d.outcome)
	sec := int(e / time.Second)
	if n := len(h.series); n > 0 && h.series[n-1].Second >= sec {
		h.series[n-1].add(d.outcome)
	} else {
		p := Point{Second: sec}
		p.add(d.outcome)
		h.series = append(h.series, p)
	}
	return d
}

// clock is the elapsed time e as the quota's clock reads it: to the last
// Config.ClockTick.
func (h *Handler) clock(e time.Duration) time.Duration {
	tick := h.cfg.ClockTick
	if tick <= 0 {
		return e
	}
	phase := h.cfg.Phase % tick
	if phase < 0 {
		phase += tick
	}
	if e < phase {
		return 0
	}
	return phase + (e-phase)/tick*tick
}

// secondaryLocked reports whether Config.Secondary refuses a request at
// elapsed time e, and sets *retry to the wait it asks for. h.mu must be held.
func (h *Handler) secondaryLocked(e time.Duration, retry *time.Duration) bool {
	s := h.cfg.Secondary
	if s.Concurrent > 0 && h.inflight >= s.Concurrent {
		*retry = cmp.Or(s.RetryAfter, time.Second)
		return true
	}
	if s.PerMinute <= 0 {
		return false
	}
	// Keep the admissions of the span (e−1m, e].
	i := 0
	for i < len(h.admissions) && h.admissions[i] <= e-time.Minute {
		i++
	}
	h.admissions = slices.Delete(h.admissions, 0, i)
	if len(h.admissions) < s.PerMinute {
		return false
	}
	*retry = cmp.Or(s.RetryAfter, h.admissions[0]+time.Minute-e)
	return true
}

// shedLocked reports whether Config.ShedEvery sheds a request the limits
// would admit. h.mu must be held.
func (h *Handler) shedLocked() bool {
	if h.cfg.ShedEvery <= 0 {
		return false
	}
	h.candidates++
	return h.candidates%h.cfg.ShedEvery == 0
}

// release marks an admitted request as answered.
func (h *Handler) release() {
	h.mu.Lock()
	h.inflight--
	h.mu.Unlock()
}

// boundary returns where the contiguous windows of q (normalized) fall
// after the handler's start, in [0, q.Window): Config.Phase, plus for
// AlignClock the time from the start to the next multiple of Window on the
// server's clock. h.start must be set.
func (h *Handler) boundary(q Quota) time.Duration {
	w := q.Window
	var clock time.Duration
	if q.Align == AlignClock {
		s := h.start.Add(h.cfg.DateSkew)
		clock = (w - s.Sub(s.Truncate(w))) % w
	}
	phase := h.cfg.Phase % w
	if phase < 0 {
		phase += w
	}
	// (clock + phase) mod w, without overflow for windows near the largest
	// Duration.
	if clock >= w-phase {
		return clock - (w - phase)
	}
	return clock + phase
}

// delay waits d, and reports false if ctx was done first.
func (h *Handler) delay(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
