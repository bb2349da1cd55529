// Command priority shows priorities in a Transport's queue: a user's
// interactive requests keep a short wait while a background sync, sharing
// the same quota, spends all the rest of it.
//
// A fake API (package throttletest, on a random loopback port) allows
// -rate requests per second (a token bucket, stated in the IETF RateLimit
// headers). One zero-config throttle.Transport carries two kinds of
// traffic:
//
//   - a background sync: -workers goroutines fetching /sync/... pages one
//     after another, as fast as the Transport admits them, so that the
//     bucket's queue always holds them;
//   - a user: a request to /search about every -every (jittered), whose
//     time to answer is what the user feels.
//
// It runs twice, against a fresh server each time: "fifo", one queue in
// arrival order, and "priority", where Transport.Priority puts /sync at
// PriorityLow and everything else at PriorityHigh. It prints, for each run,
// the user's wait (median, 99th percentile, longest), how many pages the
// sync fetched, and how much of the server's quota was used.
//
// Usage:
//
//	go run ./examples/priority [-rate 20] [-workers 8] [-every 300ms] [-duration 10s] [-latency 20ms]
//
// -duration is for each run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-throttle/throttle"
	"github.com/go-throttle/throttle/throttletest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "priority:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	rate     int           // the server's quota, requests per second
	workers  int           // the background sync's goroutines
	every    time.Duration // the user's mean time between requests
	duration time.Duration // of each run
	latency  time.Duration // the server's
}

func parse(args []string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("priority", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.IntVar(&o.rate, "rate", 20, "the server's quota in requests per second")
	fs.IntVar(&o.workers, "workers", 8, "goroutines of the background sync")
	fs.DurationVar(&o.every, "every", 300*time.Millisecond, "mean time between the user's requests")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "length of each run")
	fs.DurationVar(&o.latency, "latency", 20*time.Millisecond, "the server's latency")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments: %q", fs.Args())
	case o.rate < 1:
		return o, errors.New("-rate must be at least 1")
	case o.workers < 1:
		return o, errors.New("-workers must be at least 1")
	case o.every <= 0:
		return o, errors.New("-every must be positive")
	case o.duration < time.Second:
		return o, errors.New("-duration must be at least 1s")
	case o.latency < 0:
		return o, errors.New("-latency must not be negative")
	}
	return o, nil
}

func (o options) server() throttletest.Config {
	return throttletest.Config{
		Quota:   throttletest.Quota{Limit: o.rate, Window: time.Second, Algorithm: throttletest.TokenBucket},
		Dialect: throttletest.IETF,
		Latency: o.latency,
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	o, err := parse(args, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "A server allowing %d requests/s; a sync of %d workers and a user sending every ~%v share one Transport, %v per run.\n\n",
		o.rate, o.workers, o.every, o.duration)
	var results []result
	for _, prioritized := range []bool{false, true} {
		srv := throttletest.NewServer(o.server())
		r := scenario(ctx, srv.URL, http.DefaultTransport, o, prioritized)
		r.server = srv.Stats().Counts
		srv.Close()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		results = append(results, r)
	}
	report(out, o, results)
	return nil
}

// A result is what one run measured.
type result struct {
	name     string
	user     []time.Duration // the time each of the user's requests took
	userErrs int             // the user's requests that failed
	pages    int             // pages the sync fetched
	server   throttletest.Counts
}

// scenario runs the sync and the user against the API at url for
// o.duration, through one Transport whose requests go out by base.
func scenario(ctx context.Context, url string, base http.RoundTripper, o options, prioritized bool) result {
	tr := &throttle.Transport{Base: base}
	r := result{name: "fifo"}
	if prioritized {
		r.name = "priority"
		tr.Priority = func(req *http.Request) throttle.Priority {
			if strings.HasPrefix(req.URL.Path, "/sync/") {
				return throttle.PriorityLow
			}
			return throttle.PriorityHigh
		}
	}
	// The run ends by cancelling: a deadline would refuse the waits that
	// cannot end before it at once (ErrWaitTooLong), as it should.
	ctx, cancel := context.WithCancel(ctx)
	defer time.AfterFunc(o.duration, cancel).Stop()
	defer cancel()
	get := func(path string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+path, nil)
		if err != nil {
			return err
		}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return errors.New(resp.Status)
		}
		return nil
	}

	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range o.workers {
		wg.Go(func() {
			for page := 0; ctx.Err() == nil; page++ {
				err := get(fmt.Sprintf("/sync/items?worker=%d&page=%d", w, page))
				switch {
				case ctx.Err() != nil:
				case err != nil: // refused: retry later, not in a busy loop
					select {
					case <-ctx.Done():
					case <-time.After(time.Second):
					}
				default:
					mu.Lock()
					r.pages++
					mu.Unlock()
				}
			}
		})
	}
	rng := rand.New(rand.NewPCG(1, 2)) // the same user every run
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration((0.5 + rng.Float64()) * float64(o.every))):
			wg.Go(func() {
				start := time.Now()
				err := get("/search?q=throttle")
				took := time.Since(start)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					r.user = append(r.user, took)
				case ctx.Err() == nil:
					r.userErrs++
				}
			})
		}
	}
	wg.Wait()
	return r
}

// quantile returns the q-quantile of sorted ds (nearest rank).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(float64(len(ds))*q+0.999999) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}

func report(out io.Writer, o options, results []result) {
	fmt.Fprintf(out, "%-9s %6s %9s %9s %9s %7s %11s %6s\n", "run", "user", "user p50", "user p99", "user max", "pages", "quota used", "429s")
	for _, r := range results {
		slices.Sort(r.user)
		quota := float64(o.rate) * o.duration.Seconds()
		fmt.Fprintf(out, "%-9s %6d %9v %9v %9v %7d %10.0f%% %6d\n", r.name, len(r.user),
			quantile(r.user, 0.5).Round(time.Millisecond), quantile(r.user, 0.99).Round(time.Millisecond),
			quantile(r.user, 1).Round(time.Millisecond), r.pages, 100*float64(r.server.Admitted)/quota, r.server.Refused)
		if r.userErrs > 0 {
			fmt.Fprintf(out, "          (%d of the user's requests failed)\n", r.userErrs)
		}
	}
	fmt.Fprintf(out, "\nuser: requests answered and their time to answer (the server's latency, %v, included); pages: the sync's;\n", o.latency)
	fmt.Fprintln(out, "quota used: requests the server admitted over what it allows in the run (its first burst can take it above 100%).")
}
