package redisstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-throttle/throttle"
	"github.com/go-throttle/throttle/redisstore"
	"github.com/go-throttle/throttle/redisstore/redistest"
	"github.com/go-throttle/throttle/throttletest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The multi-process test: the parent starts redis-server and a fake API, then
// runs this test binary four times as children, each a "replica" sharing one
// quota through a Transport whose buckets live in Redis.
const (
	childEnv    = "THROTTLE_REDIS_CHILD"
	processes   = 4
	goroutines  = 4
	quotaLimit  = 50
	quotaWindow = 5 * time.Second
	runFor      = 15 * time.Second // three windows
)

type childReport struct {
	OK, TooMany, Refused int
}

func TestSharedAcrossProcesses(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		runChild(t)
		return
	}
	if testing.Short() {
		t.Skip("runs four processes for 15 s")
	}
	addr, _, _ := redistest.Start(t)
	srv := throttletest.NewTestServer(t, throttletest.Config{
		Quota:   throttletest.Quota{Limit: quotaLimit, Window: quotaWindow},
		Dialect: throttletest.IETFStructured,
		Latency: 20 * time.Millisecond,
	})

	ctx, cancel := context.WithTimeout(t.Context(), runFor+30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	reports := make([]childReport, processes)
	for i := range processes {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSharedAcrossProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"=1", "REDIS_ADDR="+addr, "API_URL="+srv.URL)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		wg.Go(func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				var r childReport
				if json.Unmarshal(sc.Bytes(), &r) == nil {
					reports[i] = r
				}
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("child %d: %v", i, err)
			}
		})
	}
	wg.Wait()

	st := srv.Stats()
	lateRefused := 0
	var refusedAt []int // the seconds of the 429s, for the log
	for _, p := range st.Series {
		if time.Duration(p.Second)*time.Second >= quotaWindow {
			lateRefused += p.Refused
		}
		if p.Refused > 0 {
			refusedAt = append(refusedAt, p.Second)
		}
	}
	windows := float64(runFor / quotaWindow)
	used := float64(st.Admitted) / (quotaLimit * windows)
	least, most := reports[0].OK, reports[0].OK
	for _, r := range reports {
		least, most = min(least, r.OK), max(most, r.OK)
	}
	t.Logf("%d processes × %d goroutines, %d per %v: server admitted %d, refused %d (%d after the first window; in seconds %v); %.1f%% of the quota used; per process %+v",
		processes, goroutines, quotaLimit, quotaWindow, st.Admitted, st.Refused, lateRefused, refusedAt, 100*used, reports)
	assert.LessOrEqual(t, lateRefused, st.Total()/100, "429s after the first window: at most 1%")
	assert.GreaterOrEqual(t, used, 0.85, "share of the quota used")
	assert.Positive(t, least, "every process gets a share (least %d, most %d)", least, most)
}

// runChild is one replica: a Transport sharing its buckets through Redis.
func runChild(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR"), ContextTimeoutEnabled: true})
	defer client.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tr := &throttle.Transport{Base: base, Config: throttle.Config{
		Store:      redisstore.New(client, redisstore.Options{}),
		StoreShare: 1.0 / processes,
	}}
	ctx, cancel := context.WithTimeout(context.Background(), runFor)
	defer cancel()
	var ok, tooMany, refused atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			c := &http.Client{Transport: tr}
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "GET", os.Getenv("API_URL")+"/x", nil)
				resp, err := c.Do(req)
				switch {
				case err != nil:
					if errors.Is(err, throttle.ErrWaitTooLong) || errors.Is(err, throttle.ErrQueueFull) {
						refused.Add(1)
						time.Sleep(50 * time.Millisecond)
					}
					continue
				case resp.StatusCode == http.StatusOK:
					ok.Add(1)
				case resp.StatusCode == http.StatusTooManyRequests:
					tooMany.Add(1)
				}
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	b, _ := json.Marshal(childReport{int(ok.Load()), int(tooMany.Load()), int(refused.Load())})
	fmt.Println(string(b))
}

// TestBucketSurvivesRedisOutage: Redis is killed while callers wait on a
// shared bucket and restarted later. The bucket keeps serving at its local
// share meanwhile, reports the outage and the recovery, and nothing panics
// or hangs.
func TestBucketSurvivesRedisOutage(t *testing.T) {
	addr, stop, restart := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1})
	defer client.Close()
	var mu sync.Mutex
	var kinds []throttle.EventKind
	up := make(chan struct{}) // closed at the first EventStoreUp
	b := throttle.NewBucket(throttle.Config{
		Limit: 100, Burst: 10, Name: "outage",
		Store: redisstore.New(client, redisstore.Options{}), StoreShare: 0.5,
		OnEvent: func(e throttle.Event) {
			mu.Lock()
			defer mu.Unlock()
			if e.Kind == throttle.EventStoreUp && !slices.Contains(kinds, e.Kind) {
				close(up)
			}
			kinds = append(kinds, e.Kind)
		},
	})
	// The callers run until the store is seen back and used again: a
	// restarted redis-server on a loaded machine may take a while to
	// answer, so the end is that, not a fixed time (bounded at 20 s).
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var before, during, after atomic.Int64
	var phase atomic.Int32
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				if err := b.Wait(ctx); err != nil {
					continue
				}
				switch phase.Load() {
				case 0:
					before.Add(1)
				case 1:
					during.Add(1)
				default:
					after.Add(1)
				}
			}
		})
	}
	time.Sleep(time.Second)
	stop()
	phase.Store(1)
	time.Sleep(1500 * time.Millisecond)
	restart()
	phase.Store(2)
	select {
	case <-up:
		for ctx.Err() == nil && after.Load() == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond)
	case <-ctx.Done():
	}
	cancel()
	wg.Wait()

	t.Logf("admitted: %d before, %d during the outage, %d after", before.Load(), during.Load(), after.Load())
	assert.Positive(t, before.Load())
	assert.Positive(t, during.Load(), "local limiting keeps serving while Redis is down")
	assert.Positive(t, after.Load(), "and the shared bucket is used again")
	assert.LessOrEqual(t, during.Load(), int64(150*0.5+10), "at about the local share of the rate during the outage")
	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, kinds, throttle.EventStoreDown)
	assert.Contains(t, kinds, throttle.EventStoreUp)
}
