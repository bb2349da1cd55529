// Command github drives a go-github client through a throttle.Transport
// against a local fake GitHub API (package throttletest), and prints what
// happens.
//
// Part 1, primary rate limits: the fake API gives the core resource 60
// requests per 10 seconds and search 10 per 10 seconds, and names the resource
// of every answer in X-RateLimit-Resource, as GitHub does. Core and search
// workers run at once through one Transport. The Transport keeps one bucket
// per resource the server names, so search running out of quota holds back
// searches only: core calls keep their own pace.
//
// Part 2, a secondary rate limit: another fake API allows only a few
// requests in flight at once and answers the one beyond with 403 and
// Retry-After, as GitHub's secondary limits do. The Transport puts every
// caller into a cooldown until Retry-After has passed, and, with Retries set,
// sends the refused request again after it, so the callers never see the 403.
//
// go-github checks rate limits itself before sending: it fails a call at
// once with a RateLimitError, unsent, when the last response of its category
// said 0 remaining, which happens whenever throttle spends a quota to the
// end, and after a secondary-limit 403 it fails the calls of every category
// until that 403's Retry-After. With a throttle.Transport underneath, set
// DisableRateLimitCheck so that the Transport, which waits instead of
// failing, is the one authority, and Retries to absorb secondary 403s.
//
// Usage:
//
//	go run ./examples/github [-duration 12s] [-latency 30ms]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-throttle/throttle"
	"github.com/go-throttle/throttle/throttletest"
	"github.com/google/go-github/v75/github"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "github:", err)
		os.Exit(1)
	}
}

type options struct {
	duration time.Duration // part 1
	latency  time.Duration
	calls    int // part 2: calls per worker
	workers  int // part 2
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	var o options
	fs := flag.NewFlagSet("github", flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.DurationVar(&o.duration, "duration", 12*time.Second, "how long part 1 (core and search at once) runs")
	fs.DurationVar(&o.latency, "latency", 30*time.Millisecond, "how long the fake API takes to answer")
	fs.IntVar(&o.workers, "workers", 8, "part 2: concurrent callers")
	fs.IntVar(&o.calls, "calls", 4, "part 2: calls per caller")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	case o.duration < time.Second:
		return errors.New("-duration must be at least 1s")
	case o.latency < 0:
		return errors.New("-latency must not be negative")
	case o.workers < 1 || o.calls < 1:
		return errors.New("-workers and -calls must be at least 1")
	}
	if err := primary(ctx, o, stdout); err != nil {
		return err
	}
	return secondary(ctx, o, stdout)
}

// newClient returns a go-github client for srv whose requests go through tr.
func newClient(srv *throttletest.Server, tr http.RoundTripper) (*github.Client, error) {
	c := github.NewClient(&http.Client{Transport: tr})
	// The fake API serves GitHub's paths at its root, as api.github.com does.
	// (WithEnterpriseURLs would add GitHub Enterprise's /api/v3/ prefix.)
	u, err := url.Parse(srv.URL + "/")
	if err != nil {
		return nil, err
	}
	c.BaseURL, c.UploadURL = u, u
	// Let the Transport, which waits, be the one rate-limit authority:
	// go-github's own check fails calls at once instead.
	c.DisableRateLimitCheck = true
	return c, nil
}

// resourceCounts are the live counts of one resource.
type resourceCounts struct {
	ok, limited, failed atomic.Int64
}

// primary runs core and search calls at once against quotas of their own.
func primary(ctx context.Context, o options, w io.Writer) error {
	srv := throttletest.NewServer(throttletest.Config{
		Quota: throttletest.Quota{Limit: 60, Window: 10 * time.Second},
		Resources: map[string]throttletest.Quota{
			"search": {Limit: 10, Window: 10 * time.Second},
		},
		Route: func(r *http.Request) string {
			if strings.HasPrefix(r.URL.Path, "/search/") {
				return "search"
			}
			return "core"
		},
		Latency: o.latency,
	})
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tr := &throttle.Transport{Base: base}
	gh, err := newClient(srv, tr)
	if err != nil {
		return err
	}

	fmt.Fprintf(w, "Part 1: primary limits. Fake GitHub: core 60 requests/10s, search 10 requests/10s, %v latency.\n", o.latency)
	fmt.Fprintf(w, "3 workers call core (repos, users), 2 workers search, all through one throttle.Transport, for %v.\n\n", o.duration)

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := time.AfterFunc(o.duration, cancel)
	defer stop.Stop()

	start := time.Now()
	var core, search resourceCounts
	var spentOnce sync.Once
	var events = make(chan string, 16)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			for n := 0; runCtx.Err() == nil; n++ {
				var resp *github.Response
				var err error
				if (i+n)%2 == 0 {
					_, resp, err = gh.Repositories.Get(runCtx, "go-throttle", "throttle")
				} else {
					_, resp, err = gh.Users.Get(runCtx, "gopher")
				}
				count(runCtx, &core, resp, err)
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for runCtx.Err() == nil {
				_, resp, err := gh.Search.Repositories(runCtx, "rate limit language:go", nil)
				count(runCtx, &search, resp, err)
				if err == nil && resp.Rate.Remaining == 0 {
					spentOnce.Do(func() {
						events <- fmt.Sprintf("  %4.1fs  search quota spent (0 of %d left, resets in %.1fs); core keeps its own pace",
							time.Since(start).Seconds(), resp.Rate.Limit, time.Until(resp.Rate.Reset.Time).Seconds())
					})
				}
			}
		})
	}

	fmt.Fprintf(w, "  %5s  %-26s %-26s\n", "", "core (200 / 429, queued)", "search (200 / 429, queued)")
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last [2][2]int64
	for running := true; running; {
		select {
		case <-done:
			running = false
		case e := <-events:
			fmt.Fprintln(w, e)
		case now := <-tick.C:
			st := tr.Stats()
			cur := [2][2]int64{{core.ok.Load(), core.limited.Load()}, {search.ok.Load(), search.limited.Load()}}
			fmt.Fprintf(w, "  %4.0fs  %-26s %-26s\n", now.Sub(start).Seconds(),
				fmt.Sprintf("%3d / %d, %d", cur[0][0]-last[0][0], cur[0][1]-last[0][1], queued(st, "#core")),
				fmt.Sprintf("%3d / %d, %d", cur[1][0]-last[1][0], cur[1][1]-last[1][1], queued(st, "#search")))
			last = cur
		}
	}
	for len(events) > 0 {
		fmt.Fprintln(w, <-events)
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	secs := time.Since(start).Seconds()
	s := srv.Stats()
	fmt.Fprintf(w, "\n  The server saw, in %.1fs:\n", secs)
	for _, name := range []string{"core", "search"} {
		c := s.Resources[name]
		fmt.Fprintf(w, "    %-7s %3d requests: %3d × 200, %d × 429  (%.2f/s admitted)\n", name, c.Total(), c.Admitted, c.Refused, float64(c.Admitted)/secs)
	}
	if n := core.failed.Load() + search.failed.Load(); n > 0 {
		fmt.Fprintf(w, "    %d calls failed on the client side\n", n)
	}
	printBuckets(w, tr.Stats())
	return nil
}

// count records the outcome of one call.
func count(ctx context.Context, c *resourceCounts, resp *github.Response, err error) {
	var rle *github.RateLimitError
	switch {
	case err == nil:
		c.ok.Add(1)
	case ctx.Err() != nil: // the run is over
	case errors.As(err, &rle) || resp != nil && resp.StatusCode == http.StatusTooManyRequests:
		c.limited.Add(1)
	default:
		c.failed.Add(1)
	}
}

// queued returns the callers waiting in the bucket whose key ends in suffix.
func queued(st throttle.TransportStats, suffix string) int {
	n := 0
	for k, b := range st.Keys {
		if strings.HasSuffix(k, suffix) {
			n += b.Queued
		}
	}
	return n
}

func printBuckets(w io.Writer, st throttle.TransportStats) {
	fmt.Fprintln(w, "  The Transport's buckets (one per host, then one per resource the server named):")
	for _, k := range slices.Sorted(maps.Keys(st.Keys)) {
		b := st.Keys[k]
		pace := "learning"
		if !b.Learning {
			pace = fmt.Sprintf("%.2f/s", float64(b.Limit))
		}
		fmt.Fprintf(w, "    %-26s pace %-8s admitted %3d, waited %3d (%.1fs in all), cooldowns %d\n",
			k, pace, b.Admitted, b.Waited, b.WaitTime.Seconds(), b.Cooldowns)
	}
}

// secondary shows a GitHub-style secondary limit: a cooldown for every
// caller, and the refused call retried after it.
func secondary(ctx context.Context, o options, w io.Writer) error {
	const concurrent = 3
	w = &syncWriter{w: w} // OnEvent below runs on the callers' goroutines
	start := time.Now()
	srv := throttletest.NewServer(throttletest.Config{
		Quota:     throttletest.Quota{Limit: 1000, Window: 10 * time.Second},
		Secondary: throttletest.SecondaryLimit{Concurrent: concurrent, RetryAfter: time.Second},
		Latency:   max(o.latency, 50*time.Millisecond),
	})
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tr := &throttle.Transport{
		Base: base,
		// Retry a refusal after the cooldown it causes, twice at most. GET
		// requests are replayable; the 403's body is drained and closed.
		Retries: 2,
		Config: throttle.Config{
			// Say when the server puts a bucket into a cooldown. OnEvent
			// runs on the goroutine of the request that saw the refusal.
			OnEvent: func(e throttle.Event) {
				if e.Kind == throttle.EventCooldown {
					fmt.Fprintf(w, "  %4.2fs  cooldown: every caller of %s holds for %v\n",
						time.Since(start).Seconds(), e.Name, time.Until(e.Until).Round(10*time.Millisecond))
				}
			},
		},
	}
	gh, err := newClient(srv, tr)
	if err != nil {
		return err
	}

	fmt.Fprintf(w, "\nPart 2: a secondary limit. Fake GitHub: 1000 requests/10s, but at most %d requests in flight;\n", concurrent)
	fmt.Fprintf(w, "the one beyond gets 403 with Retry-After: 1. %d callers make %d calls each at once, through a\n", o.workers, o.calls)
	fmt.Fprintf(w, "throttle.Transport with Retries: 2.\n\n")

	var mu sync.Mutex
	var failures []string
	var ok atomic.Int64
	var wg sync.WaitGroup
	for i := range o.workers {
		wg.Go(func() {
			for range o.calls {
				_, _, err := gh.Users.Get(ctx, fmt.Sprintf("user%d", i))
				if err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
					continue
				}
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	elapsed := time.Since(start)
	s := srv.Stats()
	fmt.Fprintf(w, "  Callers: %d calls succeeded, %d failed, in %.1fs.\n", ok.Load(), len(failures), elapsed.Seconds())
	for _, f := range failures[:min(len(failures), 3)] {
		fmt.Fprintf(w, "    %s\n", f)
	}
	fmt.Fprintf(w, "  Server: %d requests, %d × 200, %d × 403 (secondary limit).\n", s.Total(), s.Admitted, s.Secondary)
	st := tr.Stats().Total
	fmt.Fprintf(w, "  Transport: %d cooldowns; %d callers waited, %.1fs in all.\n", st.Cooldowns, st.Waited, st.WaitTime.Seconds())
	if s.Secondary > 0 {
		fmt.Fprintf(w, "  Each 403 held every caller for its Retry-After, then the refused call was sent again.\n")
	} else {
		fmt.Fprintf(w, "  The secondary limit was not reached this time.\n")
	}
	return nil
}

// syncWriter serializes writes from several goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
