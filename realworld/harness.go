package realworld

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-throttle/throttle"
)

// Options shape a run. The zero Options is the default run.
type Options struct {
	Duration   time.Duration // how long requests are started; 0: 3 s
	Goroutines int           // goroutines sending; 0: 16 (four clients: a quarter each)
	Timeout    time.Duration // each request's context deadline; 0: 2 s
	// Parallel is how many servers RunAll runs at once; 0: all of them.
	// On 2 cores, 13 servers × 4 client kinds at once starve each other.
	Parallel int
	// Latency is a network's round trip added to each request below the
	// client's limiter (Distant); 0: loopback's alone.
	Latency time.Duration
}

func (o Options) withDefaults() Options {
	if o.Duration <= 0 {
		o.Duration = 3 * time.Second
	}
	if o.Goroutines <= 0 {
		o.Goroutines = 16
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	return o
}

// A Result is what one run of a client against a fresh server saw.
//
// Every call of the client ends in exactly one of OK, TooMany, Unavailable,
// OtherStatus (answers), Refused, Cut or Errors. When the run's Duration is
// over, requests still waiting in the client's limiter are cut: they never
// reach the server, and count nowhere but in Cut. Requests already sent are
// answered and counted.
type Result struct {
	Server     Server
	Client     Client
	Duration   time.Duration
	Goroutines int

	Calls       int64 // requests the goroutines made
	Sent        int64 // of those, the ones that went out to the server
	OK          int64 // 2xx answers
	TooMany     int64 // 429 answers
	Unavailable int64 // 503 answers
	OtherStatus int64 // any other answer
	Refused     int64 // refused by the client: errors matching throttle.ErrQueueFull or ErrWaitTooLong
	Cut         int64 // still waiting in the client when the run ended; not sent
	Errors      int64 // any other error: connection, timeout
	// Admitted is the server's own count of the requests it admitted;
	// -1 if it does not tell.
	Admitted int64
	// ErrorSamples are the first few distinct messages of Errors.
	ErrorSamples []string
}

// Answers is the number of responses: OK + TooMany + Unavailable + OtherStatus.
func (r Result) Answers() int64 { return r.OK + r.TooMany + r.Unavailable + r.OtherStatus }

// Share429 is the share of the answers that were 429, from 0 to 1.
func (r Result) Share429() float64 { return ratio(float64(r.TooMany), float64(r.Answers())) }

// Used is the share of the quota used: OK ÷ Quota.Capacity(Duration), that
// is 2xx ÷ (Limit × Duration/Window + Burst).
func (r Result) Used() float64 { return ratio(float64(r.OK), r.Server.Quota.Capacity(r.Duration)) }

// UsedOfRate is OK ÷ Quota.Steady(Duration), that is 2xx ÷ (Limit ×
// Duration/Window): the share of the steady rate, burst left out.
func (r Result) UsedOfRate() float64 { return ratio(float64(r.OK), r.Server.Quota.Steady(r.Duration)) }

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Check reports whether the counts of r add up: every call ends once; what
// was sent was answered or failed; the server's count of what it admitted
// (when it tells) is at least the 2xx answers and at most those plus the
// requests that failed on the way.
func (r Result) Check() error {
	var errs []error
	if sum := r.Answers() + r.Refused + r.Cut + r.Errors; sum != r.Calls {
		errs = append(errs, fmt.Errorf("answers %d + refused %d + cut %d + errors %d = %d, want calls %d",
			r.Answers(), r.Refused, r.Cut, r.Errors, sum, r.Calls))
	}
	if r.Sent < r.Answers() || r.Sent > r.Answers()+r.Errors {
		errs = append(errs, fmt.Errorf("sent %d, want between answers %d and answers + errors %d",
			r.Sent, r.Answers(), r.Answers()+r.Errors))
	}
	if r.Admitted >= 0 && (r.Admitted < r.OK || r.Admitted > r.OK+r.Errors) {
		errs = append(errs, fmt.Errorf("server admitted %d, want between 2xx %d and 2xx + errors %d",
			r.Admitted, r.OK, r.OK+r.Errors))
	}
	return errors.Join(errs...)
}

func (r Result) String() string {
	adm, samples := "?", ""
	if len(r.ErrorSamples) > 0 {
		samples = fmt.Sprintf("  errors: %q", r.ErrorSamples)
	}
	if r.Admitted >= 0 {
		adm = fmt.Sprint(r.Admitted)
	}
	return fmt.Sprintf("%-13s %-12s sent %5d  2xx %4d  429 %5d  503 %d  other %d  refused %d  cut %2d  err %d  | 429 %5.1f%%  used %5.1f%% (%d of %.0f; of rate %5.1f%%)  server admitted %s",
		r.Server.Name, r.Client, r.Sent, r.OK, r.TooMany, r.Unavailable, r.OtherStatus, r.Refused, r.Cut, r.Errors,
		100*r.Share429(), 100*r.Used(), r.OK, r.Server.Quota.Capacity(r.Duration), 100*r.UsedOfRate(), adm) + samples
}

// errCut is what a request gets when it leaves the client's limiter after
// the run ended.
var errCut = errors.New("realworld: run over")

// cutoff sits between a client's limiter and its connections. It sends
// nothing once the run is over, and it detaches what it sends from the
// run's cancellation (keeping the request's deadline), so that a request
// already on the wire when the run ends is answered and counted.
type cutoff struct {
	base http.RoundTripper
	end  time.Time
	sent *atomic.Int64
}

func (c *cutoff) RoundTrip(req *http.Request) (*http.Response, error) {
	if !time.Now().Before(c.end) {
		return nil, errCut
	}
	c.sent.Add(1)
	ctx := context.WithoutCancel(req.Context())
	var cancel context.CancelFunc
	if dl, ok := req.Context().Deadline(); ok {
		ctx, cancel = context.WithDeadline(ctx, dl)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	resp, err := c.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// Distant returns base as a server a network's round trip of latency away
// would answer: each request waits half of it on its way out and its
// answer half on the way back, each ±50% at random, so that the server
// counts a request before its client hears of it. A deadline or
// cancellation of the request's context cuts a wait short with the
// context's error. A latency of 0 or less returns base.
func Distant(base http.RoundTripper, latency time.Duration) http.RoundTripper {
	if latency <= 0 {
		return base
	}
	return &distant{base: base, latency: latency}
}

type distant struct {
	base    http.RoundTripper
	latency time.Duration
}

func (d *distant) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := d.travel(req.Context()); err != nil {
		return nil, err
	}
	resp, err := d.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if err := d.travel(req.Context()); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

// travel waits half of d's round trip, ±50% at random, or until ctx ends.
func (d *distant) travel(ctx context.Context) error {
	t := time.NewTimer(time.Duration(float64(d.latency) / 2 * (0.5 + rand.Float64())))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// Run starts a fresh instance of s and drives client kind c against it:
// o.Goroutines goroutines send GET requests one after another, as fast as
// the client lets them, for o.Duration, each request with a deadline of
// o.Timeout. Every response body is drained and closed. A goroutine whose
// request the client refused pauses 10 ms before the next. Run returns when
// the answers are in and the server is stopped. The error is about the
// server or the client kind, never about the figures.
func Run(ctx context.Context, s Server, c Client, o Options) (Result, error) {
	o = o.withDefaults()
	res := Result{Server: s, Client: c, Duration: o.Duration, Goroutines: o.Goroutines, Admitted: -1}
	inst, err := s.Start()
	if err != nil {
		return res, fmt.Errorf("%s: %w", s.Name, err)
	}
	defer inst.Close()

	var n counts
	start := time.Now()
	end := start.Add(o.Duration)
	cl, err := c.build(s.Quota, func(rt http.RoundTripper) http.RoundTripper {
		return &cutoff{base: Distant(rt, o.Latency), end: end, sent: &n.sent}
	})
	if err != nil {
		return res, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A cancellation, not a deadline: a deadline would be every request's
	// too, and the limiters would refuse the last ones for it.
	timer := time.AfterFunc(time.Until(end), cancel)
	defer timer.Stop()

	var wg sync.WaitGroup
	for i := range o.Goroutines {
		p := cl.procs[i%len(cl.procs)]
		wg.Go(func() {
			for runCtx.Err() == nil && time.Now().Before(end) {
				if n.do(runCtx, p.hc, inst.URL, o.Timeout) == refused {
					// A client that refuses at once would turn this loop
					// into a busy one that starves every other run of CPU.
					select {
					case <-runCtx.Done():
					case <-time.After(refusalPause):
					}
				}
			}
		})
	}
	wg.Wait()
	for _, p := range cl.procs {
		p.conns.CloseIdleConnections()
	}
	if err := inst.Close(); err != nil {
		return res, fmt.Errorf("%s: close: %w", s.Name, err)
	}
	n.into(&res)
	res.Admitted = inst.Admitted()
	return res, ctx.Err()
}

// counts are a run's counters, shared by its goroutines.
type counts struct {
	calls, sent, ok, tooMany, unavailable, other, refused, cut, errs atomic.Int64

	mu      sync.Mutex
	samples []string
}

// outcome is how a request ended, as far as the loop cares.
type outcome int

const (
	answered outcome = iota
	refused
	failed
)

// refusalPause is how long a goroutine waits after its client refused a
// request locally, before it asks again.
const refusalPause = 10 * time.Millisecond

func (n *counts) do(runCtx context.Context, hc *http.Client, url string, timeout time.Duration) outcome {
	ctx, cancel := context.WithTimeout(runCtx, timeout)
	defer cancel()
	n.calls.Add(1)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		n.fail(err)
		return failed
	}
	resp, err := hc.Do(req)
	if err != nil {
		switch {
		case errors.Is(err, errCut), runCtx.Err() != nil && errors.Is(err, context.Canceled):
			n.cut.Add(1)
		case errors.Is(err, throttle.ErrQueueFull), errors.Is(err, throttle.ErrWaitTooLong):
			n.refused.Add(1)
			return refused
		default:
			n.fail(err)
		}
		return failed
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		n.ok.Add(1)
	case resp.StatusCode == http.StatusTooManyRequests:
		n.tooMany.Add(1)
	case resp.StatusCode == http.StatusServiceUnavailable:
		n.unavailable.Add(1)
	default:
		n.other.Add(1)
	}
	return answered
}

// maxSamples is how many distinct error messages a Result keeps.
const maxSamples = 3

func (n *counts) fail(err error) {
	n.errs.Add(1)
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.samples) < maxSamples && !slices.Contains(n.samples, err.Error()) {
		n.samples = append(n.samples, err.Error())
	}
}

func (n *counts) into(r *Result) {
	r.Calls, r.Sent = n.calls.Load(), n.sent.Load()
	r.OK, r.TooMany, r.Unavailable, r.OtherStatus = n.ok.Load(), n.tooMany.Load(), n.unavailable.Load(), n.other.Load()
	r.Refused, r.Cut, r.Errors = n.refused.Load(), n.cut.Load(), n.errs.Load()
	n.mu.Lock()
	r.ErrorSamples = slices.Clone(n.samples)
	n.mu.Unlock()
}

// RunAll runs every client kind against every server and returns the
// results, server by server in the order given, the client kinds in the
// order given within each. The limited clients of different servers run at
// the same time, o.Parallel servers at once (each server's in turn); the
// NoLimit baselines, which keep the CPU busy, run alone, one after another.
// A server that cannot start is left out of the results, and its error is
// joined in the error returned.
func RunAll(ctx context.Context, servers []Server, clients []Client, o Options) ([]Result, error) {
	type cell struct {
		res Result
		err error
		ran bool
	}
	cells := make([][]cell, len(servers))
	for i := range cells {
		cells[i] = make([]cell, len(clients))
	}
	run := func(i, j int) {
		r, err := Run(ctx, servers[i], clients[j], o)
		cells[i][j] = cell{res: r, err: err, ran: true}
	}
	slots := make(chan struct{}, cmp.Or(o.Parallel, len(servers), 1))
	var wg sync.WaitGroup
	for i := range servers {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			for j, c := range clients {
				if c != NoLimit && ctx.Err() == nil {
					run(i, j)
				}
			}
		})
	}
	wg.Wait()
	for i := range servers {
		for j, c := range clients {
			if c == NoLimit && ctx.Err() == nil {
				run(i, j)
			}
		}
	}
	var out []Result
	var errs []error
	for i := range servers {
		var failed error
		for j := range clients {
			if c := cells[i][j]; c.ran && c.err != nil && failed == nil {
				failed = c.err
			}
		}
		if failed != nil {
			errs = append(errs, failed)
			continue
		}
		for j := range clients {
			if c := cells[i][j]; c.ran {
				out = append(out, c.res)
			}
		}
	}
	return out, errors.Join(errs...)
}
