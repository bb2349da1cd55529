package redisstore_test

import (
	"bufio"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-throttle/throttle"
	"github.com/go-throttle/throttle/redisstore"
	"github.com/go-throttle/throttle/redisstore/redistest"
)

// serverPID returns the pid of the redis-server c talks to, from INFO.
func serverPID(t *testing.T, c *redis.Client) int {
	t.Helper()
	info, err := c.Info(t.Context(), "server").Result()
	require.NoError(t, err)
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "process_id:"); ok {
			pid, err := strconv.Atoi(v)
			require.NoError(t, err)
			return pid
		}
	}
	t.Fatal("INFO server names no process_id")
	return 0
}

// TestRedisStopped: a server stopped by SIGSTOP keeps its connections open
// and never answers. Whatever the client's options say, each call fails
// within about the store's Timeout, and a bucket on the store reports
// EventStoreDown and keeps serving at its local share, instead of every
// caller stalling for go-redis's ReadTimeout (3 s) and its retries.
func TestRedisStopped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opt  redis.Options
	}{
		{"ContextTimeoutEnabled", redis.Options{ContextTimeoutEnabled: true}},
		{"default client", redis.Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr, _, _ := redistest.Start(t)
			tc.opt.Addr = addr
			c := redis.NewClient(&tc.opt)
			t.Cleanup(func() { c.Close() })
			pid := serverPID(t, c)
			var stopOnce sync.Once
			resume := func() { stopOnce.Do(func() { _ = syscall.Kill(pid, syscall.SIGCONT) }) }
			t.Cleanup(resume) // before the client closes and the server is killed

			const timeout, prompt = 200 * time.Millisecond, 1500 * time.Millisecond
			s := redisstore.New(c, redisstore.Options{Timeout: timeout})
			var mu sync.Mutex
			var kinds []throttle.EventKind
			b := throttle.NewBucket(throttle.Config{
				Limit: 100, Burst: 10, Name: "stopped", Store: s, MaxWait: time.Second,
				OnEvent: func(e throttle.Event) {
					mu.Lock()
					kinds = append(kinds, e.Kind)
					mu.Unlock()
				},
			})
			require.NoError(t, b.Wait(t.Context()))

			require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
			start := time.Now()
			_, err := s.Take(t.Context(), "k", 1, 10, 10)
			elapsed := time.Since(start)
			require.Error(t, err, "Take with the server stopped")
			require.Less(t, elapsed, prompt, "Take failed after %v, not within the timeout: %v", elapsed, err)

			start = time.Now()
			err = s.Correct(t.Context(), "k", throttle.Correction{Hold: time.Second})
			elapsed = time.Since(start)
			require.Error(t, err, "Correct with the server stopped")
			require.Less(t, elapsed, prompt, "Correct failed after %v, not within the timeout: %v", elapsed, err)

			start = time.Now()
			require.NoError(t, b.Wait(t.Context()), "the bucket serves at its local share")
			elapsed = time.Since(start)
			require.Less(t, elapsed, prompt, "the bucket's caller waited %v", elapsed)
			mu.Lock()
			assert.Contains(t, kinds, throttle.EventStoreDown)
			mu.Unlock()

			resume()
			require.Eventually(t, func() bool {
				wait, err := s.Take(t.Context(), "k", 1, 10, 10)
				return err == nil && wait == 0
			}, 10*time.Second, 10*time.Millisecond, "Take never succeeded after SIGCONT")
		})
	}
}
