// Command trace runs one client kind against one real-world server and
// prints every answer as it arrives: when its request was sent and answered,
// the status, the rate-limit headers, and the throttle bucket's rate and
// tokens just after. It is for finding out why a cell of the table is what
// it is.
//
//	go run ./realworld/cmd/trace -server httprate [-client zero|told|four|store] [-redis ADDR] [-d 6s] [-g 16] [-timeout 2s]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-throttle/throttle"
	"github.com/go-throttle/throttle/realworld"
	"github.com/go-throttle/throttle/redisstore"
)

func main() {
	name := flag.String("server", "httprate", "the server, by its table name")
	kind := flag.String("client", "zero", "zero (zero config), told (told the quota), four (four Transports) or store (four Transports on one throttle.MemoryStore)")
	d := flag.Duration("d", 6*time.Second, "how long to send")
	g := flag.Int("g", 16, "goroutines")
	timeout := flag.Duration("timeout", 2*time.Second, "each request's deadline, as the table's runs have it (0: none)")
	limit := flag.Int("limit", 30, "the servers' quota: requests per -window (nginx and echo keep theirs)")
	window := flag.Duration("window", 3*time.Second, "the period of -limit, whole seconds")
	latency := flag.Duration("latency", 0, "a network's round trip added to each request, ±50% each way (realworld.Distant)")
	redisAddr := flag.String("redis", "", "with -client store: a running redis-server's address; the four share a redisstore there, not a MemoryStore")
	flag.Parse()
	if err := realworld.SetQuota(*limit, *window); err != nil {
		fmt.Fprintln(os.Stderr, "trace:", err)
		os.Exit(2)
	}
	var store throttle.Store = &throttle.MemoryStore{}
	if *redisAddr != "" {
		rdb := redis.NewClient(&redis.Options{Addr: *redisAddr, ContextTimeoutEnabled: true})
		defer rdb.Close()
		// A prefix of its own: buckets of an earlier run, still held, are
		// not this run's.
		store = redisstore.New(rdb, redisstore.Options{Prefix: fmt.Sprintf("trace-%d", time.Now().UnixNano())})
	}
	if err := run(*name, *kind, store, *d, *g, *timeout, *latency); err != nil {
		fmt.Fprintln(os.Stderr, "trace:", err)
		os.Exit(1)
	}
}

func run(name, kind string, store throttle.Store, d time.Duration, g int, timeout, latency time.Duration) error {
	srvs, err := realworld.ServersNamed(name)
	if err != nil {
		return err
	}
	inst, err := srvs[0].Start()
	if err != nil {
		return err
	}
	defer inst.Close()

	start := time.Now()
	var mu sync.Mutex
	var lines []string
	n := 1
	if kind == "four" || kind == "store" {
		n = 4
	}
	var trs []*throttle.Transport
	for i := range n {
		conns := &http.Transport{MaxIdleConnsPerHost: 64}
		far := realworld.Distant(conns, latency)
		tr := &throttle.Transport{}
		switch kind {
		case "told":
			tr.Config.Limit = srvs[0].Quota.Rate()
		case "store":
			tr.Config.Store = store
		}
		tr.Base = roundTrip(func(req *http.Request) (*http.Response, error) {
			sent := time.Since(start)
			resp, err := far.RoundTrip(req)
			if err != nil {
				left := "none"
				if d, ok := req.Context().Deadline(); ok {
					left = time.Until(d).String()
				}
				mu.Lock()
				lines = append(lines, fmt.Sprintf("c%d %7.3f %7.3f error %v (deadline in %s)", i, sent.Seconds(), time.Since(start).Seconds(), err, left))
				mu.Unlock()
				return nil, err
			}
			h := resp.Header
			var kv []string
			for k, v := range h {
				lk := strings.ToLower(k)
				if strings.Contains(lk, "limit") || lk == "retry-after" || lk == "date" {
					kv = append(kv, strings.TrimPrefix(lk, "x-")+"="+v[0])
				}
			}
			sort.Strings(kv)
			mu.Lock()
			lines = append(lines, fmt.Sprintf("c%d %7.3f %7.3f %d %s", i, sent.Seconds(), time.Since(start).Seconds(), resp.StatusCode, strings.Join(kv, " ")))
			mu.Unlock()
			return resp, nil
		})
		trs = append(trs, tr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for i := range g {
		hc := &http.Client{Transport: trs[i%n]}
		wg.Go(func() {
			for ctx.Err() == nil {
				rctx, rcancel := ctx, context.CancelFunc(func() {})
				if timeout > 0 {
					rctx, rcancel = context.WithTimeout(ctx, timeout)
				}
				req, _ := http.NewRequestWithContext(rctx, "GET", inst.URL, nil)
				resp, err := hc.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						mu.Lock()
						lines = append(lines, fmt.Sprintf("   %7.3f refused: %v", time.Since(start).Seconds(), err))
						mu.Unlock()
						time.Sleep(10 * time.Millisecond)
					}
					rcancel()
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				rcancel()
			}
		})
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	go func() {
		for range tick.C {
			for i, tr := range trs {
				for k, st := range tr.Stats().Keys {
					mu.Lock()
					lines = append(lines, fmt.Sprintf("   %7.3f c%d %s limit=%.2f tokens=%.2f queued=%d inflight=%d learning=%v", time.Since(start).Seconds(), i, k, float64(st.Limit), st.Tokens, st.Queued, st.InFlight, st.Learning))
					mu.Unlock()
				}
			}
		}
	}()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, l := range lines {
		fmt.Println(l)
	}
	return nil
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
