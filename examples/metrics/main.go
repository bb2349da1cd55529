// Command metrics shows what a throttle.Transport does as Prometheus
// metrics, through OpenTelemetry (package otelthrottle) and OTel's
// Prometheus exporter.
//
// A fake API (package throttletest, on a random loopback port) enforces a
// quota, by default 20 requests per second in fixed five-second windows, and
// states it in GitHub's X-RateLimit headers. Several "tabs" (goroutines, each
// with its own http.Client) call it as fast as they can through one shared
// throttle.Transport wired to an OTel MeterProvider, as in the stress
// example; /metrics serves the throttle_* series meanwhile:
//
//	curl -s http://127.0.0.1:9464/metrics | grep ^throttle_
//
// Usage:
//
//	go run ./examples/metrics [-addr 127.0.0.1:9464] [-tabs 8] [-rate 20] [-window 5s]
//		[-requests 0] [-dialect github|ietf] [-latency 20ms]
//
// With -requests N each tab makes N requests, then the command prints a
// summary and serves /metrics until interrupted; with 0 the tabs go on until
// it is interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-throttle/throttle"
	"github.com/go-throttle/throttle/otelthrottle"
	"github.com/go-throttle/throttle/throttletest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "metrics:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	addr     string
	tabs     int
	rate     float64 // requests per second
	window   time.Duration
	requests int // per tab; 0: until interrupted
	dialect  throttletest.Dialect
	latency  time.Duration
}

// dialects are the headers the fake API may send: GitHub's name a scope
// (X-RateLimit-Resource: core), so its requests move to the bucket
// key#core after the first answer; the IETF draft's name none.
var dialects = map[string]throttletest.Dialect{
	"github": throttletest.GitHub,
	"ietf":   throttletest.IETF,
}

func parseFlags(args []string, out io.Writer) (options, error) {
	var o options
	var dialect string
	fs := flag.NewFlagSet("metrics", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:9464", "loopback address to serve /metrics on (port 0: any free port)")
	fs.IntVar(&o.tabs, "tabs", 8, "number of tabs: goroutines, each with its own http.Client")
	fs.Float64Var(&o.rate, "rate", 20, "the server's quota, in requests per second")
	fs.DurationVar(&o.window, "window", 5*time.Second, "the server's quota window")
	fs.IntVar(&o.requests, "requests", 0, "requests per tab (0: until interrupted)")
	fs.StringVar(&dialect, "dialect", "github", "rate-limit headers the server sends: github or ietf")
	fs.DurationVar(&o.latency, "latency", 20*time.Millisecond, "how long the server takes to answer")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	var ok bool
	if o.dialect, ok = dialects[dialect]; !ok {
		return o, fmt.Errorf("-dialect %q: unknown", dialect)
	}
	host, _, err := net.SplitHostPort(o.addr)
	if err != nil {
		return o, fmt.Errorf("-addr: %w", err)
	}
	switch ip := net.ParseIP(host); {
	case host != "localhost" && (ip == nil || !ip.IsLoopback()):
		return o, fmt.Errorf("-addr %q: want a loopback address", o.addr)
	case o.tabs < 1:
		return o, errors.New("-tabs must be at least 1")
	case !(o.rate > 0) || math.IsInf(o.rate, 1):
		return o, errors.New("-rate must be positive")
	case o.window <= 0:
		return o, errors.New("-window must be positive")
	case math.Round(o.rate*o.window.Seconds()) < 1:
		return o, errors.New("-rate × -window must be at least one request")
	case o.requests < 0:
		return o, errors.New("-requests must not be negative")
	case o.latency < 0:
		return o, errors.New("-latency must not be negative")
	}
	return o, nil
}

// An app is the fake API, the load on it and the /metrics server.
type app struct {
	api     *throttletest.Server
	tr      *throttle.Transport
	tel     *otelthrottle.Telemetry
	mp      *sdkmetric.MeterProvider
	metrics *http.Server
	addr    string // where /metrics is served

	cancel context.CancelFunc
	load   sync.WaitGroup
	ok     atomic.Int64 // 200s the tabs got
	limit  atomic.Int64 // 429s the tabs got
	errs   atomic.Int64 // other outcomes: refusals, errors
}

// start starts the fake API, the /metrics server and the tabs.
func start(ctx context.Context, o options) (*app, error) {
	a := &app{}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return nil, err
	}
	a.addr = ln.Addr().String()

	// The OTel side: a MeterProvider whose reader is the Prometheus
	// exporter, registered on a registry of its own, which /metrics serves.
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		ln.Close()
		return nil, err
	}
	a.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))

	// The one line that matters: the shared Transport reports to mp.
	a.tr = &throttle.Transport{}
	if a.tel, err = otelthrottle.Instrument(a.tr, a.mp); err != nil {
		ln.Close()
		return nil, err
	}

	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	a.metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go a.metrics.Serve(ln) //nolint:errcheck // ends with ErrServerClosed at close

	a.api = throttletest.NewServer(throttletest.Config{
		Quota:   throttletest.Quota{Limit: int(math.Round(o.rate * o.window.Seconds())), Window: o.window},
		Dialect: o.dialect,
		Latency: o.latency,
	})
	ctx, a.cancel = context.WithCancel(ctx)
	for range o.tabs {
		client := &http.Client{Transport: a.tr}
		a.load.Go(func() { a.tab(ctx, client, o.requests) })
	}
	return a, nil
}

// tab makes n requests (0: until ctx ends) one after another.
func (a *app) tab(ctx context.Context, client *http.Client, n int) {
	for i := 0; (n == 0 || i < n) && ctx.Err() == nil; i++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.api.URL+"/items", nil)
		if err != nil {
			a.errs.Add(1)
			return
		}
		resp, err := client.Do(req)
		if err != nil {
			a.errs.Add(1)
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			a.ok.Add(1)
		case http.StatusTooManyRequests:
			a.limit.Add(1)
		default:
			a.errs.Add(1)
		}
	}
}

// wait waits for the tabs to finish.
func (a *app) wait() { a.load.Wait() }

// close stops the tabs and every server.
func (a *app) close() error {
	a.cancel()
	a.load.Wait()
	a.api.Close()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	return errors.Join(a.metrics.Close(), a.tel.Close(), a.mp.Shutdown(context.Background()))
}

func run(ctx context.Context, args []string, out io.Writer) error {
	o, err := parseFlags(args, out)
	if err != nil {
		return err
	}
	a, err := start(ctx, o)
	if err != nil {
		return err
	}
	defer a.close()
	fmt.Fprintf(out, "Fake API at %s; %d tabs through one throttle.Transport.\nMetrics at http://%s/metrics\n", a.api.URL, o.tabs, a.addr)
	if o.requests > 0 {
		a.wait()
		s := a.tr.Stats().Total
		fmt.Fprintf(out, "Done: %d 200s, %d 429s, %d other; %d callers waited %v in all. Serving /metrics until interrupted.\n",
			a.ok.Load(), a.limit.Load(), a.errs.Load(), s.Waited, s.WaitTime.Round(time.Millisecond))
	}
	<-ctx.Done()
	return nil
}
