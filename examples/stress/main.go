// Command stress shows the multi-tab problem in Go, and what a shared
// throttle.Transport does about it.
//
// A fake API (package throttletest, on a random loopback port) enforces a
// quota, by default 20 requests per second in fixed five-second windows
// (100 per window), and states it in GitHub's X-RateLimit headers. Several "tabs" (goroutines, each
// with its own http.Client, as browser tabs or replicas each have their own)
// call it as fast as they can, twice, each time against a fresh server:
//
//   - naive: every tab has a plain http.Transport and nothing coordinates
//     them. On a 429 a tab pauses for a fixed -naive-pause (100ms) and tries
//     again, ignoring what the headers say, as much hand-written retry code
//     does.
//   - throttled: every tab's client shares ONE &throttle.Transport{}, with no
//     configuration: the transport learns the quota from the first answer and
//     queues the tabs' requests in FIFO order to stay inside it.
//
// It prints one line per second while each run goes, then a side-by-side
// summary, and writes a PNG chart of what the server admitted and refused
// each second.
//
// Usage:
//
//	go run ./examples/stress [-tabs 8] [-rate 20] [-window 5s] [-duration 20s]
//		[-dialect github] [-algorithm fixed] [-latency 20ms] [-out throttle-stress.png]
//
// -duration is the total: each of the two runs gets half.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-throttle/throttle"
	"github.com/go-throttle/throttle/throttletest"
	"golang.org/x/time/rate"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "stress:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	tabs       int
	rate       float64 // requests per second
	window     time.Duration
	duration   time.Duration // both runs together
	dialect    throttletest.Dialect
	algorithm  throttletest.Algorithm
	latency    time.Duration
	naivePause time.Duration
	out        string
	quiet      bool // no per-second lines
}

var dialects = map[string]throttletest.Dialect{
	"github":          throttletest.GitHub,
	"ietf":            throttletest.IETF,
	"ietf-structured": throttletest.IETFStructured,
	"openai":          throttletest.OpenAI,
	"retry-after":     throttletest.RetryAfterOnly,
	"none":            throttletest.None,
}

var algorithms = map[string]throttletest.Algorithm{
	"fixed":   throttletest.FixedWindow,
	"sliding": throttletest.SlidingWindow,
	"token":   throttletest.TokenBucket,
}

func parseFlags(args []string, stdout io.Writer) (options, error) {
	var o options
	var dialect, algorithm string
	fs := flag.NewFlagSet("stress", flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.IntVar(&o.tabs, "tabs", 8, "number of tabs: goroutines, each with its own http.Client")
	fs.Float64Var(&o.rate, "rate", 20, "the server's quota, in requests per second")
	fs.DurationVar(&o.window, "window", 5*time.Second, "the server's quota window (the quota is rate×window requests per window)")
	fs.DurationVar(&o.duration, "duration", 20*time.Second, "total running time; each of the two runs gets half")
	fs.StringVar(&dialect, "dialect", "github", "rate-limit headers the server sends: "+keys(dialects))
	fs.StringVar(&algorithm, "algorithm", "fixed", "how the server counts: "+keys(algorithms))
	fs.DurationVar(&o.latency, "latency", 20*time.Millisecond, "how long the server takes to answer")
	fs.DurationVar(&o.naivePause, "naive-pause", 100*time.Millisecond, "how long a naive tab pauses after a 429")
	fs.StringVar(&o.out, "out", "throttle-stress.png", "path of the PNG chart (\"\": no chart)")
	fs.BoolVar(&o.quiet, "q", false, "do not print a line per second")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: stress [flags]\n\nTabs hammer a rate-limited fake API, first on their own, then through one shared throttle.Transport.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	var ok bool
	if o.dialect, ok = dialects[dialect]; !ok {
		return o, fmt.Errorf("-dialect %q: want one of %s", dialect, keys(dialects))
	}
	if o.algorithm, ok = algorithms[algorithm]; !ok {
		return o, fmt.Errorf("-algorithm %q: want one of %s", algorithm, keys(algorithms))
	}
	switch {
	case o.tabs < 1:
		return o, errors.New("-tabs must be at least 1")
	case !(o.rate > 0) || math.IsInf(o.rate, 1):
		return o, errors.New("-rate must be positive")
	case o.window <= 0:
		return o, errors.New("-window must be positive")
	case o.duration < 2*time.Second:
		return o, errors.New("-duration must be at least 2s (1s per run)")
	case math.Round(o.rate*o.window.Seconds()) < 1:
		return o, errors.New("-rate × -window must be at least one request")
	case o.latency < 0 || o.naivePause < 0:
		return o, errors.New("-latency and -naive-pause must not be negative")
	}
	return o, nil
}

func keys[V any](m map[string]V) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return strings.Join(ks, "|")
}

// quota is the server's quota for o.
func (o options) quota() throttletest.Quota {
	return throttletest.Quota{
		Limit:     int(math.Round(o.rate * o.window.Seconds())),
		Window:    o.window,
		Algorithm: o.algorithm,
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	o, err := parseFlags(args, stdout)
	if err != nil {
		return err
	}
	q := o.quota()
	per := o.duration / 2
	fmt.Fprintf(stdout, "Fake API: %d requests per %v (%s, %v), %v latency, %s headers. %d tabs, %v per run.\n",
		q.Limit, o.window, algorithmName(o.algorithm), o.algorithm, o.latency, dialectName(o.dialect), o.tabs, per)

	naive, err := runOnce(ctx, o, false, stdout)
	if err != nil {
		return err
	}
	throttled, err := runOnce(ctx, o, true, stdout)
	if err != nil {
		return err
	}
	summarize(stdout, o, naive, throttled)

	if o.out == "" {
		return nil
	}
	path, err := writeChart(o, naive, throttled)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	fmt.Fprintf(stdout, "\nChart: %s\n", path)
	return nil
}

func algorithmName(a throttletest.Algorithm) string {
	for k, v := range algorithms {
		if v == a {
			return k + " windows"
		}
	}
	return a.String()
}

func dialectName(d throttletest.Dialect) string {
	for k, v := range dialects {
		if v == d {
			return k
		}
	}
	return d.String()
}

// result is what one run measured.
type result struct {
	name     string
	elapsed  time.Duration
	server   throttletest.Stats
	calls    []time.Duration // each client.Do, from call to response
	toOK     []time.Duration // each 200, from the first attempt of that request
	refused  int             // client-side refusals (ErrQueueFull, ErrWaitTooLong)
	failures int             // other errors
	firstErr error
	stats    throttle.TransportStats // the shared transport's, throttled runs only
}

// counts are the live counters of a run, read once a second.
type counts struct {
	sent, ok, limited, refused atomic.Int64
}

// budget is the most 200s the server can give in one run: rate × seconds
// when the windows divide the run, more when the run ends inside a window
// (the whole window's quota was available) or the server's token bucket
// starts full.
func (o options) budget() float64 {
	per := o.duration / 2
	q := o.quota()
	if o.algorithm == throttletest.TokenBucket {
		return float64(q.Limit) + o.rate*per.Seconds()
	}
	windows := math.Ceil(float64(per) / float64(o.window))
	return float64(q.Limit) * windows
}

// runOnce runs the tabs against a fresh server for half of o.duration.
func runOnce(ctx context.Context, o options, throttled bool, stdout io.Writer) (*result, error) {
	srv := throttletest.NewServer(throttletest.Config{
		Quota:   o.quota(),
		Dialect: o.dialect,
		Latency: o.latency,
	})
	defer srv.Close()

	r := &result{name: "naive"}
	var shared *throttle.Transport
	if throttled {
		r.name = "throttled"
		// The whole point: one Transport, zero configuration, shared by every
		// tab's client. It keeps one bucket per host and learns the quota
		// from the server's answers.
		shared = &throttle.Transport{}
		fmt.Fprintf(stdout, "\nThrottled: %d tabs, each its own http.Client, all sharing one &throttle.Transport{}.\n", o.tabs)
	} else {
		fmt.Fprintf(stdout, "\nNaive: %d tabs, each its own http.Client and http.Transport; on a 429 a tab pauses %v and tries again.\n", o.tabs, o.naivePause)
	}

	// The run ends by cancellation, not by a deadline: a deadline on the
	// requests' context would make the throttle refuse, up front, every
	// request it predicts cannot be sent before the end (ErrWaitTooLong),
	// which is right for real callers but is not what this demo measures.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopTimer := time.AfterFunc(o.duration/2, cancel)
	defer stopTimer.Stop()

	var live counts
	tabs := make([]*tab, o.tabs)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range tabs {
		t := &tab{url: srv.URL + "/items", live: &live}
		if throttled {
			t.client = &http.Client{Transport: shared}
		} else {
			base := &http.Transport{}
			defer base.CloseIdleConnections()
			t.client = &http.Client{Transport: base}
			t.pause = o.naivePause
		}
		tabs[i] = t
		wg.Go(func() { t.loop(runCtx) })
	}

	progress := make(chan struct{})
	go func() {
		defer close(progress)
		if !o.quiet {
			report(runCtx, stdout, start, &live, shared)
		}
	}()
	wg.Wait()
	cancel()
	<-progress
	r.elapsed = time.Since(start)
	if throttled {
		r.stats = shared.Stats()
		// The zero Transport sends through http.DefaultTransport: let its
		// idle connections to this server go.
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.server = srv.Stats()
	for _, t := range tabs {
		r.calls = append(r.calls, t.calls...)
		r.toOK = append(r.toOK, t.toOK...)
		r.refused += t.refused
		r.failures += t.failures
		if r.firstErr == nil {
			r.firstErr = t.firstErr
		}
	}
	return r, nil
}

// report prints a line per second until ctx is done.
func report(ctx context.Context, w io.Writer, start time.Time, live *counts, shared *throttle.Transport) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last [4]int64
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			cur := [4]int64{live.sent.Load(), live.ok.Load(), live.limited.Load(), live.refused.Load()}
			line := fmt.Sprintf("  %3.0fs  sent %4d   200 %4d   429 %4d", now.Sub(start).Seconds(),
				cur[0]-last[0], cur[1]-last[1], cur[2]-last[2])
			if shared != nil {
				s := shared.Stats().Total
				line += fmt.Sprintf("   queued %3d", s.Queued)
				if n := cur[3] - last[3]; n > 0 {
					line += fmt.Sprintf("   refused by throttle %d", n)
				}
			}
			fmt.Fprintln(w, line)
			last = cur
		}
	}
}

// A tab makes requests one after another, as fast as its client lets it.
type tab struct {
	client *http.Client
	url    string
	pause  time.Duration // after a 429; 0: go again at once (the throttle holds it)
	live   *counts

	calls    []time.Duration
	toOK     []time.Duration
	refused  int
	failures int
	firstErr error
}

func (t *tab) loop(ctx context.Context) {
	first := time.Now() // the first attempt of the current request
	for ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.url, nil)
		if err != nil {
			t.fail(err)
			return
		}
		begin := time.Now()
		resp, err := t.client.Do(req)
		if err != nil {
			switch {
			case ctx.Err() != nil: // the run is over
			case errors.Is(err, throttle.ErrQueueFull), errors.Is(err, throttle.ErrWaitTooLong):
				t.refused++
				t.live.refused.Add(1)
				sleep(ctx, 10*time.Millisecond)
			default:
				t.fail(err)
				sleep(ctx, 10*time.Millisecond)
			}
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		end := time.Now()
		t.calls = append(t.calls, end.Sub(begin))
		t.live.sent.Add(1)
		switch resp.StatusCode {
		case http.StatusOK:
			t.live.ok.Add(1)
			t.toOK = append(t.toOK, end.Sub(first))
			first = end
		case http.StatusTooManyRequests:
			t.live.limited.Add(1)
			sleep(ctx, t.pause)
		default:
			t.fail(fmt.Errorf("unexpected status %s", resp.Status))
		}
	}
}

func (t *tab) fail(err error) {
	t.failures++
	if t.firstErr == nil {
		t.firstErr = err
	}
}

func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
	case <-tm.C:
	}
}

// summarize prints the two runs side by side.
func summarize(w io.Writer, o options, naive, throttled *result) {
	runs := []*result{naive, throttled}
	budget := o.budget()

	fmt.Fprintf(w, "\nSummary (%v per run; the server allows %.0f requests in that time)\n\n", o.duration/2, budget)
	row := func(label string, f func(r *result) string) {
		fmt.Fprintf(w, "  %-30s %14s %14s\n", label, f(naive), f(throttled))
	}
	row("", func(r *result) string { return r.name })
	row("requests the server saw", func(r *result) string { return fmt.Sprint(r.server.Total()) })
	row("200 OK", func(r *result) string { return fmt.Sprint(r.server.Admitted) })
	row("429 Too Many Requests", func(r *result) string {
		return fmt.Sprintf("%d (%s)", r.server.Refused, pct(float64(r.server.Refused), float64(r.server.Total())))
	})
	row("quota used (200s / budget)", func(r *result) string { return pct(float64(r.server.Admitted), budget) })
	row("client.Do time, mean", func(r *result) string { return ms(mean(r.calls)) })
	row("client.Do time, p99", func(r *result) string { return ms(percentile(r.calls, 0.99)) })
	row("time to get a 200, mean", func(r *result) string { return ms(mean(r.toOK)) })
	row("time to get a 200, p99", func(r *result) string { return ms(percentile(r.toOK, 0.99)) })
	if throttled.refused > 0 || naive.refused > 0 {
		row("refused by the throttle", func(r *result) string { return fmt.Sprint(r.refused) })
	}
	for _, r := range runs {
		if r.failures > 0 {
			fmt.Fprintf(w, "\n  %s: %d requests failed; the first: %v\n", r.name, r.failures, r.firstErr)
		}
	}
	fmt.Fprintf(w, "\n  client.Do time is from the call to the response; in the throttled run it includes\n")
	fmt.Fprintf(w, "  the wait in the transport's queue. Time to get a 200 also counts the 429s and pauses\n")
	fmt.Fprintf(w, "  before it.\n")
	fmt.Fprintf(w, "\n  What the shared Transport ended with:\n")
	for _, k := range slices.Sorted(maps.Keys(throttled.stats.Keys)) {
		s := throttled.stats.Keys[k]
		pace := "pacing at " + limitString(s.Limit)
		if s.Learning {
			pace = "still learning"
		}
		fmt.Fprintf(w, "    bucket %-24s %s, %d admitted, %d waited (%.1fs in all), %d cooldowns, %d corrections\n",
			k, pace, s.Admitted, s.Waited, s.WaitTime.Seconds(), s.Cooldowns, s.Corrections)
	}

	fmt.Fprintln(w)
	for _, r := range runs {
		c := r.server.Counts
		fmt.Fprintf(w, "  %-9s %4d requests for %4d 200s (%s of the budget); %d refused by the server (%s of requests).\n",
			r.name+":", c.Total(), c.Admitted, pct(float64(c.Admitted), budget), c.Refused, pct(float64(c.Refused), float64(c.Total())))
	}
}

func limitString(l rate.Limit) string {
	switch {
	case l == rate.Inf:
		return "none (still learning)"
	case l == 0:
		return "none"
	}
	return fmt.Sprintf("%.2f requests/s", float64(l))
}

func pct(num, den float64) string {
	if den <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*num/den)
}

func ms(d time.Duration) string {
	if d < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
}

func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return -1
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

// percentile returns the p-th quantile of ds (nearest rank), -1 if empty.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return -1
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(i, 0)]
}

// outPath returns where the chart goes: path if its directory is writable,
// else the same name in os.TempDir.
func outPath(path string) string {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err == nil {
		f.Close()
		return path
	}
	return filepath.Join(os.TempDir(), filepath.Base(path))
}
