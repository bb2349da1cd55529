// Command openai drives the official OpenAI and Anthropic Go SDKs
// (github.com/openai/openai-go/v3, github.com/anthropics/anthropic-sdk-go/v2)
// through a throttle.Transport against fake APIs (package throttletest) whose
// binding quota is tokens, and prints what happens.
//
// Part 1, token quotas: a fake OpenAI allows 40000 tokens a minute in fixed
// windows, a fake Anthropic 20000 input tokens a minute replenished
// continuously, each as the vendor documents it. Workers make chat calls of
// prompts and max_tokens of many sizes, first with the SDK's default client
// (its own retries, no throttle), then through a throttle.Transport told the
// token quota. Each call's cost is estimated up front from its prompt and
// max_tokens and passed in the context (throttle.WithCost), through the SDK,
// to the Transport, which takes that many tokens; once the answer's usage is
// known it is settled (throttle.Settle). The Transport's Unit makes the
// token quota's headers, not the request quota's, correct the bucket.
//
// Part 2, refusals: a request the bucket refuses (here, one whose wait
// would exceed MaxWait). With Refusal: Refuse429 the SDK gets a synthetic
// 429 that says x-should-retry: false, and returns at once; with the
// default RefuseError the SDK takes the error for a connection error and
// retries it, with backoff, before it gives up.
//
// Usage:
//
//	go run ./examples/openai [-vendor all] [-duration 2m] [-speed 20] [-workers 8]
//
// -speed divides every window and latency (and so multiplies every rate):
// the default runs two minutes of the APIs' time in six seconds.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/go-throttle/throttle"
	"github.com/go-throttle/throttle/throttletest"
	"github.com/openai/openai-go/v3"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "openai:", err)
		os.Exit(1)
	}
}

type options struct {
	vendors  []vendor
	duration time.Duration // of the APIs' time
	speed    float64
	workers  int
	latency  time.Duration // of the APIs' time
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	var o options
	fs := flag.NewFlagSet("openai", flag.ContinueOnError)
	fs.SetOutput(stdout)
	which := fs.String("vendor", "all", "openai, anthropic or all")
	fs.DurationVar(&o.duration, "duration", 2*time.Minute, "how long each load run lasts, in the APIs' time")
	fs.Float64Var(&o.speed, "speed", 20, "how much faster than real time the fake APIs run")
	fs.IntVar(&o.workers, "workers", 8, "concurrent callers")
	fs.DurationVar(&o.latency, "latency", time.Second, "how long an answer takes, in the APIs' time")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch *which {
	case "all":
		o.vendors = []vendor{openAI, anthropicAPI}
	case "openai":
		o.vendors = []vendor{openAI}
	case "anthropic":
		o.vendors = []vendor{anthropicAPI}
	default:
		return fmt.Errorf("-vendor %q: want openai, anthropic or all", *which)
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	case o.duration <= 0 || o.speed <= 0 || o.latency < 0:
		return errors.New("-duration and -speed must be positive, -latency not negative")
	case o.workers < 1:
		return errors.New("-workers must be at least 1")
	}
	loopback := func(c throttletest.Config) (*throttletest.Handler, string, http.RoundTripper, func()) {
		srv := throttletest.NewServer(c)
		rt := &http.Transport{}
		return srv.Handler, srv.URL, rt, func() { rt.CloseIdleConnections(); srv.Close() }
	}
	tokenLoad(ctx, o, stdout, loopback)
	return refusals(ctx, o.vendors, stdout, loopback)
}

// A serveFunc starts a fake API for c: its handler, base URL and the
// transport that reaches it, and a function that stops it.
type serveFunc func(c throttletest.Config) (h *throttletest.Handler, base string, rt http.RoundTripper, stop func())

// scaled returns v's fake sped up by speed, answering after latency (in
// the API's time) plus up to half as much again.
func (v vendor) scaled(speed float64, latency time.Duration) vendor {
	c := v.fake
	c.Quota.Window = time.Duration(float64(c.Quota.Window) / speed)
	c.Tokens = append([]throttletest.TokenQuota(nil), c.Tokens...)
	for i := range c.Tokens {
		c.Tokens[i].Window = time.Duration(float64(c.Tokens[i].Window) / speed)
	}
	c.Latency = time.Duration(float64(latency) / speed)
	c.Jitter = c.Latency / 2
	v.fake = c
	return v
}

// tokenLoad runs part 1 and prints its table.
func tokenLoad(ctx context.Context, o options, w io.Writer, serve serveFunc) []row {
	fmt.Fprintf(w, "Part 1: token quotas, %d workers, %v of the APIs' time per run (%gx speed), answers in %v-%v.\n\n",
		o.workers, o.duration, o.speed, o.latency, o.latency*3/2)
	fmt.Fprintf(w, "%-10s %-36s %-16s %6s %7s %6s %7s %6s\n", "vendor", "binding quota", "client", "calls", "errors", "sent", "429s", "used")
	var rows []row
	for _, v := range o.vendors {
		v = v.scaled(o.speed, o.latency)
		for _, c := range []client{sdkDefault, xrate, throttled, learning} {
			h, base, rt, stop := serve(v.fake)
			r := load(ctx, v, h, base, rt, c, o.workers, time.Duration(float64(o.duration)/o.speed), v.fake.Latency)
			stop()
			rw := row{v, c, r}
			rows = append(rows, rw)
			fmt.Fprintln(w, rw)
		}
	}
	fmt.Fprintln(w)
	return rows
}

// A row is one line of part 1's table.
type row struct {
	v      vendor
	client client
	r      result
}

func (rw row) String() string {
	q := rw.v.tokenQuota()
	algo := "fixed window"
	if q.Algorithm == throttletest.TokenBucket {
		algo = "refill"
	}
	quota := fmt.Sprintf("%d %s/min, %s", q.Limit, rw.v.unit, algo)
	return fmt.Sprintf("%-10s %-36s %-16s %6d %7d %6d %6.1f%% %5.1f%%", rw.v.name, quota, rw.client,
		rw.r.calls, rw.r.failed, rw.r.stats.Total(), 100*rw.r.share429(), 100*rw.r.used(rw.v))
}

// A refusal is what an SDK caller saw of one refused request.
type refusal struct {
	mode     throttle.Refusal
	deadline time.Duration // the call's context's; 0: none
	elapsed  time.Duration // from the SDK call to its return
	attempts int64         // RoundTrips the SDK made
	err      error
}

// refusals runs part 2 for every vendor and prints what the caller saw.
func refusals(ctx context.Context, vendors []vendor, w io.Writer, serve serveFunc) error {
	fmt.Fprintln(w, "Part 2: a refused request (its wait would exceed MaxWait), SDK retries at their default (2).")
	for _, v := range vendors {
		for _, c := range []struct {
			mode     throttle.Refusal
			deadline time.Duration
		}{{throttle.Refuse429, 0}, {throttle.RefuseError, 0}, {throttle.RefuseError, 800 * time.Millisecond}} {
			r, err := refuse(ctx, v, c.mode, c.deadline, serve)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "  %-10s %-24s returned after %-9v %d attempt(s), %s\n    %v\n",
				v.name, r.name(), r.elapsed.Round(10*time.Microsecond), r.attempts, r.kind(), r.err)
		}
	}
	return nil
}

// name names r's mode and deadline.
func (r refusal) name() string {
	s := modeName(r.mode)
	if r.deadline > 0 {
		s += fmt.Sprintf(", %v deadline", r.deadline)
	}
	return s
}

// kind says how the caller can tell r's error: the synthetic 429's header,
// or errors.Is.
func (r refusal) kind() string { return errKind(r.err) }

// errKind says how a caller can tell err: an SDK's error with its status
// and RefusedHeader, or errors.Is.
func errKind(err error) string {
	var oe *openai.Error
	var ae *anthropic.Error
	switch {
	case errors.As(err, &oe) && oe.Response != nil:
		return fmt.Sprintf("*openai.Error %d, %s: %s", oe.StatusCode, throttle.RefusedHeader, oe.Response.Header.Get(throttle.RefusedHeader))
	case errors.As(err, &ae) && ae.Response != nil:
		return fmt.Sprintf("*anthropic.Error %d, %s: %s", ae.StatusCode, throttle.RefusedHeader, ae.Response.Header.Get(throttle.RefusedHeader))
	}
	return fmt.Sprintf("errors.Is(err, throttle.ErrWaitTooLong) %v", errors.Is(err, throttle.ErrWaitTooLong))
}

func modeName(m throttle.Refusal) string {
	if m == throttle.Refuse429 {
		return "Refuse429"
	}
	return "RefuseError"
}

// refuse makes one call that drains a bucket, then one that it refuses,
// with a context deadline after deadline (0: none), and returns what the
// second call saw.
func refuse(ctx context.Context, v vendor, mode throttle.Refusal, deadline time.Duration, serve serveFunc) (refusal, error) {
	_, base, rt, stop := serve(v.fake)
	defer stop()
	tr := &throttle.Transport{
		Base:    rt,
		Config:  throttle.Config{Limit: 1, Burst: 2048, MaxWait: 100 * time.Millisecond},
		Refusal: mode,
	}
	var attempts atomic.Int64
	hc := &http.Client{Transport: counting{tr, &attempts}}
	call := v.newCaller(hc, base, 2, nil)
	j := job{prompt: text[:400], maxTokens: 100, cost: 2048}
	if err := call(ctx, j); err != nil {
		return refusal{}, fmt.Errorf("%s: the first call: %w", v.name, err)
	}
	attempts.Store(0)
	r := refusal{mode: mode, deadline: deadline}
	if deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, deadline)
		defer cancel()
	}
	start := time.Now()
	r.err = call(ctx, j) // 2048 more tokens at 1/s: far beyond MaxWait
	r.elapsed = time.Since(start)
	r.attempts = attempts.Load()
	if r.err == nil {
		return r, fmt.Errorf("%s %s: the second call was not refused", v.name, modeName(mode))
	}
	return r, nil
}

// counting counts the requests an SDK hands its http.Client's transport.
type counting struct {
	rt http.RoundTripper
	n  *atomic.Int64
}

func (c counting) RoundTrip(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.rt.RoundTrip(req)
}
