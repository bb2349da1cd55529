// Command redis shows several OS processes keeping one API quota together,
// with their buckets in Redis.
//
// A fake API (package throttletest, on a random loopback port) enforces a
// quota, by default 50 requests per 5-second fixed window (10 per second),
// and states it in the IETF RateLimit and RateLimit-Policy headers. The
// command then runs -procs copies of itself as child processes, as replicas
// of a service would be. Each child has its own throttle.Transport, and every
// Transport keeps its bucket's tokens and cooldown in the same Redis through
// package redisstore:
//
//	&throttle.Transport{Config: throttle.Config{
//		Store:      redisstore.New(client, redisstore.Options{}),
//		StoreShare: 1 / procs,
//	}}
//
// Each child's -workers goroutines call the API as fast as their Transport
// lets them until -duration is over. Nothing else coordinates the processes.
// The parent then prints what each process got, what the server admitted and
// refused in each window, and how much of the quota was used.
//
// Redis is looked for at -redis. If nothing answers there and redis-server is
// on $PATH, the command starts a private one on a free loopback port, without
// persistence, and kills it on exit (-start-redis=false turns that off).
//
// Usage:
//
//	go run ./examples/redis [-redis 127.0.0.1:6379] [-procs 4] [-workers 4]
//		[-rate 10] [-window 5s] [-duration 15s] [-start-redis]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-throttle/throttle"
	"github.com/go-throttle/throttle/redisstore"
	"github.com/go-throttle/throttle/throttletest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		stop()
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "redis:", err)
		os.Exit(1)
	}
}

// childFlag, as the first argument, runs the command as one of the processes
// started by the parent. It is not listed in the usage.
const childFlag = "-child"

const (
	latency      = 20 * time.Millisecond // the fake API's answer time
	refusedPause = 50 * time.Millisecond // a worker's pause after its Transport refused a request
	pingTimeout  = time.Second
	startTimeout = 5 * time.Second // for a private redis-server to answer PING
)

// run runs the parent, or with childFlag first in args, a child.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == childFlag {
		c, err := parseChild(args[1:])
		if err != nil {
			return err
		}
		return runChild(ctx, c, stdout)
	}
	o, err := parseFlags(args, stdout)
	if err != nil {
		return err
	}
	return runParent(ctx, o, stdout)
}

// options are the parent's flags.
type options struct {
	redis      string
	procs      int
	workers    int
	rate       float64 // requests per second
	window     time.Duration
	duration   time.Duration
	startRedis bool
}

// limit is the server's quota per window.
func (o options) limit() int { return int(math.Round(o.rate * o.window.Seconds())) }

func parseFlags(args []string, stdout io.Writer) (options, error) {
	var o options
	_, err := exec.LookPath("redis-server")
	onPath := err == nil
	fs := flag.NewFlagSet("redis", flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.StringVar(&o.redis, "redis", "127.0.0.1:6379", "address of the Redis the processes share")
	fs.IntVar(&o.procs, "procs", 4, "number of processes sharing the quota")
	fs.IntVar(&o.workers, "workers", 4, "goroutines calling the API in each process")
	fs.Float64Var(&o.rate, "rate", 10, "the server's quota, in requests per second")
	fs.DurationVar(&o.window, "window", 5*time.Second, "the server's fixed quota window, in whole seconds (the quota is rate×window requests per window)")
	fs.DurationVar(&o.duration, "duration", 15*time.Second, "how long the processes call the API")
	fs.BoolVar(&o.startRedis, "start-redis", onPath, "if nothing answers at -redis, start a private redis-server on a free loopback port (default true when redis-server is on $PATH)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: redis [flags]\n\nSeveral processes call one rate-limited API, sharing its quota through throttle.Transports whose buckets live in Redis.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments: %q", fs.Args())
	case o.procs < 1:
		return o, errors.New("-procs must be at least 1")
	case o.workers < 1:
		return o, errors.New("-workers must be at least 1")
	case !(o.rate > 0) || math.IsInf(o.rate, 1):
		return o, errors.New("-rate must be positive")
	case o.window < time.Second || o.window%time.Second != 0:
		// The IETF headers state the window in whole seconds.
		return o, errors.New("-window must be a whole number of seconds, at least 1s")
	case o.limit() < 1:
		return o, errors.New("-rate × -window must be at least one request")
	case o.duration < time.Second:
		return o, errors.New("-duration must be at least 1s")
	}
	return o, nil
}

// runParent starts Redis if needed, the fake API and the children, and
// prints what they did.
func runParent(ctx context.Context, o options, stdout io.Writer) error {
	addr, stopRedis, err := findRedis(ctx, o, stdout)
	if err != nil {
		return err
	}
	defer stopRedis()

	limit := o.limit()
	srv := throttletest.NewServer(throttletest.Config{
		Quota:   throttletest.Quota{Limit: limit, Window: o.window},
		Dialect: throttletest.IETFStructured,
		Latency: latency,
	})
	defer srv.Close()
	// The server's windows start now; the children stop at the same instant,
	// so that the run covers whole windows however long they take to start.
	until := time.Now().Add(o.duration)
	fmt.Fprintf(stdout, "Fake API at %s: %d requests per %v fixed window (%.4g/s), IETF RateLimit headers, %v latency.\n",
		srv.URL, limit, o.window, float64(limit)/o.window.Seconds(), latency)
	fmt.Fprintf(stdout, "Running %d processes × %d workers for %v. Each process has its own throttle.Transport; their buckets live in Redis at %s (StoreShare 1/%d if Redis fails).\n\n",
		o.procs, o.workers, o.duration, addr, o.procs)

	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this program to run its children: %w", err)
	}
	// Cancelling kids kills the children: on an interrupt, or if one fails
	// to start.
	kids, cancel := context.WithCancel(ctx)
	defer cancel()
	children := make([]*child, o.procs)
	var wg sync.WaitGroup
	for i := range children {
		c := &child{n: i + 1}
		children[i] = c
		args := []string{childFlag,
			"-redis", addr,
			"-api", srv.URL,
			"-procs", strconv.Itoa(o.procs),
			"-workers", strconv.Itoa(o.workers),
			"-until", until.Format(time.RFC3339Nano),
		}
		if err := c.start(kids, exe, args); err != nil {
			cancel()
			wg.Wait()
			return err
		}
		wg.Go(c.wait)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	var errs []error
	for _, c := range children {
		if c.err != nil {
			errs = append(errs, c.err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	summarize(stdout, o, children, srv.Stats())
	return nil
}

// A child is one process started by the parent.
type child struct {
	n      int
	cmd    *exec.Cmd
	out    io.ReadCloser
	stderr bytes.Buffer // read after the process has been waited for
	report childReport
	err    error
}

func (c *child) start(ctx context.Context, exe string, args []string) error {
	c.cmd = exec.CommandContext(ctx, exe, args...)
	c.cmd.Stderr = &c.stderr
	c.cmd.WaitDelay = time.Second
	var err error
	if c.out, err = c.cmd.StdoutPipe(); err != nil {
		return err
	}
	if err := c.cmd.Start(); err != nil {
		return fmt.Errorf("starting process %d: %w", c.n, err)
	}
	return nil
}

// wait reads the child's report and waits for it to exit.
func (c *child) wait() {
	got := false
	sc := bufio.NewScanner(c.out)
	for sc.Scan() {
		if json.Unmarshal(sc.Bytes(), &c.report) == nil {
			got = true
		}
	}
	err := c.cmd.Wait()
	switch {
	case err != nil:
		c.err = fmt.Errorf("process %d (pid %d): %w\n%s", c.n, c.cmd.Process.Pid, err, c.stderr.Bytes())
	case !got:
		c.err = fmt.Errorf("process %d (pid %d) exited without a report\n%s", c.n, c.cmd.Process.Pid, c.stderr.Bytes())
	}
}

// summarize prints the per-process table and the totals.
func summarize(w io.Writer, o options, children []*child, st throttletest.Stats) {
	fmt.Fprintf(w, "%-9s %8s %6s %6s %9s %7s\n", "process", "pid", "200", "429", "refused", "errors")
	var total childReport
	for _, c := range children {
		r := c.report
		fmt.Fprintf(w, "%-9d %8d %6d %6d %9d %7d\n", c.n, c.cmd.Process.Pid, r.OK, r.TooMany, r.Refused, r.Errors)
		total.OK += r.OK
		total.TooMany += r.TooMany
		total.Refused += r.Refused
		total.Errors += r.Errors
		if total.FirstError == "" {
			total.FirstError = r.FirstError
		}
	}
	fmt.Fprintf(w, "%-9s %8s %6d %6d %9d %7d\n", "total", "", total.OK, total.TooMany, total.Refused, total.Errors)
	fmt.Fprintf(w, "  refused: requests a Transport did not send because it predicted they could not go before the run's end\n"+
		"  (throttle.ErrWaitTooLong, from the requests' deadline); the worker pauses %v and asks again, so they pile up in the last moments.\n", refusedPause)
	if total.Errors > 0 {
		fmt.Fprintf(w, "  errors: other failures; the first: %s\n", total.FirstError)
	}

	// Per window, from the server's per-second series: -window is whole seconds.
	limit := o.limit()
	perWindow := int(o.window / time.Second)
	windows := int((o.duration + o.window - 1) / o.window)
	admitted := make([]int, windows)
	refused := make([]int, windows)
	late := 0 // 429s after the first window
	for _, p := range st.Series {
		i := min(p.Second/perWindow, windows-1) // a request at the very end belongs to the last
		admitted[i] += p.Admitted
		refused[i] += p.Refused
		if i > 0 {
			late += p.Refused
		}
	}
	fmt.Fprintf(w, "\nServer, per %v window (quota %d):\n", o.window, limit)
	for i := range windows {
		from := time.Duration(i) * o.window
		to := min(from+o.window, o.duration)
		fmt.Fprintf(w, "  %6v – %-6v admitted %4d   refused (429) %4d\n", from, to, admitted[i], refused[i])
	}

	budget := o.rate * o.duration.Seconds()
	fmt.Fprintf(w, "\nTotals: server admitted %d, refused %d (429); %d of them after the first window.\n", st.Admitted, st.Refused, late)
	if st.Admitted != total.OK {
		n := st.Admitted - total.OK
		fmt.Fprintf(w, "  (The processes saw %d 200s: the server counts a request when it arrives, and %d %s still in flight when the run ended.)\n",
			total.OK, n, plural(n, "was", "were"))
	}
	fmt.Fprintf(w, "Quota: %.4g/s × %v = %.0f requests; %d admitted = %.1f%% of the quota used",
		o.rate, o.duration, budget, st.Admitted, 100*float64(st.Admitted)/budget)
	if windows*perWindow != int(o.duration/time.Second) || o.duration%time.Second != 0 {
		// The last window is cut short by the end of the run, but the server
		// allows its whole quota in it.
		fmt.Fprintf(w, " (the fixed windows allow up to %d: %d started × %d)", windows*limit, windows, limit)
	}
	fmt.Fprintln(w, ".")
	switch {
	case st.Refused == 0:
		fmt.Fprintf(w, "No request went over the quota: %d processes stayed inside it together.\n", o.procs)
	case late == 0:
		fmt.Fprintln(w, "Every 429 came in the first window; none after.")
	default:
		fmt.Fprintf(w, "%d %s went over the quota after the first window.\n", late, plural(late, "request", "requests"))
	}
}

// findRedis returns the address of a Redis that answers: o.redis, or a
// private redis-server it starts, which stop kills.
func findRedis(ctx context.Context, o options, stdout io.Writer) (addr string, stop func(), err error) {
	if err := ping(ctx, o.redis); err == nil {
		fmt.Fprintf(stdout, "Redis at %s answered PING.\n", o.redis)
		return o.redis, func() {}, nil
	}
	bin, lookErr := exec.LookPath("redis-server")
	if !o.startRedis || lookErr != nil {
		port := "6379"
		if _, p, err := net.SplitHostPort(o.redis); err == nil {
			port = p
		}
		msg := fmt.Sprintf("redis-server is not running at %s. Start one with: redis-server --port %s  (Debian: apt-get install redis-server), or pass -redis host:port", o.redis, port)
		if o.startRedis {
			msg += "; -start-redis needs redis-server on $PATH"
		}
		return "", nil, errors.New(msg)
	}
	r, err := startRedis(ctx, bin)
	if err != nil {
		return "", nil, err
	}
	fmt.Fprintf(stdout, "No Redis answered at %s: started a private redis-server at %s (pid %d, no persistence, killed on exit).\n",
		o.redis, r.addr, r.cmd.Process.Pid)
	return r.addr, r.stop, nil
}

// ping reports whether a Redis answers PING at addr within pingTimeout. It
// speaks RESP itself rather than through go-redis, whose pool logs every
// failed dial to stderr: here a failure is an expected answer.
func ping(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		conn.SetDeadline(deadline)
	}
	if _, err := io.WriteString(conn, "PING\r\n"); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING to %s answered %q", addr, strings.TrimSpace(line))
	}
	return nil
}

// privateRedis is a redis-server started by the parent.
type privateRedis struct {
	addr   string
	cmd    *exec.Cmd
	exited chan struct{} // closed once cmd has been waited for
	log    bytes.Buffer  // its output; read after exited is closed
}

// startRedis starts redis-server on a free loopback port and returns once it
// answers PING.
func startRedis(ctx context.Context, bin string) (*privateRedis, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("finding a free port for redis-server: %w", err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	r := &privateRedis{addr: net.JoinHostPort("127.0.0.1", port), exited: make(chan struct{})}
	r.cmd = exec.Command(bin, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no")
	r.cmd.Stdout, r.cmd.Stderr = &r.log, &r.log
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	go func() { r.cmd.Wait(); close(r.exited) }()
	deadline := time.Now().Add(startTimeout)
	for ping(ctx, r.addr) != nil {
		select {
		case <-r.exited:
			return nil, fmt.Errorf("redis-server on %s exited at start:\n%s", r.addr, r.log.Bytes())
		case <-ctx.Done():
			r.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			r.stop()
			return nil, fmt.Errorf("redis-server on %s did not answer PING within %v:\n%s", r.addr, startTimeout, r.log.Bytes())
		}
	}
	return r, nil
}

func (r *privateRedis) stop() {
	r.cmd.Process.Kill()
	<-r.exited
}

// childOptions are a child's flags, set by the parent.
type childOptions struct {
	redis, api string
	procs      int
	workers    int
	until      time.Time
}

func parseChild(args []string) (childOptions, error) {
	var c childOptions
	var until string
	fs := flag.NewFlagSet("redis "+childFlag, flag.ContinueOnError)
	fs.StringVar(&c.redis, "redis", "", "address of Redis")
	fs.StringVar(&c.api, "api", "", "base URL of the API")
	fs.IntVar(&c.procs, "procs", 1, "number of processes sharing the quota")
	fs.IntVar(&c.workers, "workers", 1, "goroutines calling the API")
	fs.StringVar(&until, "until", "", "end of the run (RFC 3339)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	var err error
	if c.until, err = time.Parse(time.RFC3339Nano, until); err != nil {
		return c, fmt.Errorf("-until: %w", err)
	}
	if c.redis == "" || c.api == "" || c.procs < 1 || c.workers < 1 {
		return c, fmt.Errorf("bad child arguments %q", args)
	}
	return c, nil
}

// childReport is what a child prints, as one JSON line, when it is done.
type childReport struct {
	OK         int    `json:"ok"`       // 200 responses
	TooMany    int    `json:"too_many"` // 429 responses
	Refused    int    `json:"refused"`  // requests the Transport refused to send
	Errors     int    `json:"errors"`   // other failures
	FirstError string `json:"first_error,omitempty"`
}

// runChild is one process: workers calling the API through a Transport whose
// bucket lives in Redis, until c.until.
func runChild(ctx context.Context, c childOptions, stdout io.Writer) error {
	client := redis.NewClient(&redis.Options{Addr: c.redis, ContextTimeoutEnabled: true})
	defer client.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	// The whole point: the bucket's tokens and cooldown are in Redis, so the
	// processes draw on one quota. Everything else (the queue, what the
	// headers teach) stays in the process. If Redis fails, each process
	// falls back to its 1/procs share of the rate.
	tr := &throttle.Transport{Base: base, Config: throttle.Config{
		Store:      redisstore.New(client, redisstore.Options{}),
		StoreShare: 1 / float64(c.procs),
	}}

	// The requests carry the run's deadline, so the Transport refuses at
	// once a request it predicts cannot be sent before the end, rather than
	// queueing it in vain.
	ctx, cancel := context.WithDeadline(ctx, c.until)
	defer cancel()
	var ok, tooMany, refused, failed atomic.Int64
	var firstErr atomic.Pointer[string]
	var wg sync.WaitGroup
	for range c.workers {
		wg.Go(func() {
			hc := &http.Client{Transport: tr}
			for ctx.Err() == nil {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.api+"/items", nil)
				if err != nil {
					panic(err) // the parent's URL
				}
				resp, err := hc.Do(req)
				switch {
				case err == nil:
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					switch resp.StatusCode {
					case http.StatusOK:
						ok.Add(1)
					case http.StatusTooManyRequests:
						tooMany.Add(1)
					default:
						failed.Add(1)
						s := resp.Status
						firstErr.CompareAndSwap(nil, &s)
					}
				case ctx.Err() != nil: // the run is over
				case errors.Is(err, throttle.ErrWaitTooLong), errors.Is(err, throttle.ErrQueueFull):
					refused.Add(1)
					sleep(ctx, refusedPause)
				default:
					failed.Add(1)
					s := err.Error()
					firstErr.CompareAndSwap(nil, &s)
					sleep(ctx, refusedPause)
				}
			}
		})
	}
	wg.Wait()
	r := childReport{OK: int(ok.Load()), TooMany: int(tooMany.Load()), Refused: int(refused.Load()), Errors: int(failed.Load())}
	if s := firstErr.Load(); s != nil {
		r.FirstError = strings.TrimSpace(*s)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", b)
	return err
}

// sleep sleeps for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
