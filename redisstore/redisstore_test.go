package redisstore_test

import (
	"context"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/go-throttle/throttle"
	"github.com/go-throttle/throttle/redisstore"
	"github.com/go-throttle/throttle/redisstore/redistest"
)

// These tests run against a real redis-server on loopback, so they measure
// real time: they assert bounds on the waits Redis computes, never exact
// figures, and use rates slow enough that a slow (race-enabled) run cannot
// refill a bucket between two calls that the test expects to see it empty.

// newClient returns a client for addr that honours context deadlines, as the
// package documentation recommends, closed when t ends.
func newClient(t testing.TB, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	return c
}

// newStore starts a server and returns a store on it with zero Options, and
// the client under it.
func newStore(t testing.TB) (*redisstore.Store, *redis.Client) {
	addr, _, _ := redistest.Start(t)
	c := newClient(t, addr)
	return redisstore.New(c, redisstore.Options{}), c
}

// take calls s.Take and fails t on error.
func take(t *testing.T, s *redisstore.Store, key string, n int, limit rate.Limit, burst int) time.Duration {
	t.Helper()
	wait, err := s.Take(t.Context(), key, n, limit, burst)
	require.NoError(t, err, "Take(%q, %d, %v, %d)", key, n, limit, burst)
	return wait
}

// correct calls s.Correct and fails t on error.
func correct(t *testing.T, s *redisstore.Store, key string, c throttle.Correction) {
	t.Helper()
	require.NoError(t, s.Correct(t.Context(), key, c), "Correct(%q, %+v)", key, c)
}

// requireWait fails t unless lo < wait <= hi.
func requireWait(t *testing.T, wait, lo, hi time.Duration) {
	t.Helper()
	require.Truef(t, lo < wait && wait <= hi, "Take waits %v, want in (%v, %v]", wait, lo, hi)
}

func TestTakeAdmitsBurstThenRefuses(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	const limit, burst = 0.5, 5 // a token every 2s
	for i := range burst {
		require.Zero(t, take(t, s, "k", 1, limit, burst), "Take #%d of a full bucket of %d", i+1, burst)
	}
	requireWait(t, take(t, s, "k", 1, limit, burst), 1500*time.Millisecond, 2*time.Second)
	// Two tokens are one interval further away; a refusal takes nothing.
	requireWait(t, take(t, s, "k", 2, limit, burst), 3500*time.Millisecond, 4*time.Second)
	requireWait(t, take(t, s, "k", 1, limit, burst), 1500*time.Millisecond, 2*time.Second)
	// Other keys are other buckets.
	require.Zero(t, take(t, s, "other", burst, limit, burst), "Take(burst) of a fresh bucket")
}

func TestTakeRefills(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	const limit, burst = 20, 2 // a token every 50ms
	const iv = 50 * time.Millisecond
	require.Zero(t, take(t, s, "k", burst, limit, burst))
	wait := take(t, s, "k", 1, limit, burst)
	requireWait(t, wait, 0, iv)
	time.Sleep(wait)
	require.Zero(t, take(t, s, "k", 1, limit, burst), "Take after waiting the %v it reported", wait)
	requireWait(t, take(t, s, "k", 1, limit, burst), 0, iv)
	time.Sleep(2 * iv)
	require.Zero(t, take(t, s, "k", 2, limit, burst), "Take(2) after two intervals")
}

func TestTakeInvalid(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	for _, tc := range []struct {
		name  string
		n     int
		limit rate.Limit
		burst int
		is    error // nil: any error
	}{
		{"n=0", 0, 10, 10, nil},
		{"n<0", -1, 10, 10, nil},
		{"limit=0", 1, 0, 10, nil},
		{"limit<0", 1, -1, 10, nil},
		{"limit=NaN", 1, rate.Limit(math.NaN()), 10, nil},
		{"n>burst", 11, 10, 10, throttle.ErrExceedsBurst},
		{"burst=0", 1, 10, 0, throttle.ErrExceedsBurst},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wait, err := s.Take(t.Context(), "k", tc.n, tc.limit, tc.burst)
			require.Error(t, err, "Take(k, %d, %v, %d) = %v, nil", tc.n, tc.limit, tc.burst, wait)
			assert.True(t, strings.HasPrefix(err.Error(), "redisstore: "), "error %q lacks the package prefix", err)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
		})
	}
	t.Run("nil store", func(t *testing.T) {
		var s *redisstore.Store
		_, err := s.Take(t.Context(), "k", 1, 1, 1)
		assert.Error(t, err)
		assert.Error(t, s.Correct(t.Context(), "k", throttle.Correction{Hold: time.Second}))
		_, err = new(redisstore.Store).Take(t.Context(), "k", 1, 1, 1)
		assert.Error(t, err)
	})
	t.Run("correct", func(t *testing.T) {
		for _, c := range []throttle.Correction{
			{Limit: 0, Burst: 1, SetTokens: true},
			{Limit: 1, Burst: 0, SetTokens: true},
			{Limit: 1, Burst: 1, SetTokens: true, Tokens: math.NaN()},
		} {
			assert.Error(t, s.Correct(t.Context(), "k", c), "Correct(%+v)", c)
		}
	})
}

// Huge and tiny figures stay finite and admit or refuse as they should.
func TestTakeExtremes(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	require.Zero(t, take(t, s, "slow", 1, 1e-12, math.MaxInt))
	require.Zero(t, take(t, s, "tiny", 1, 1e-300, 1))
	wait := take(t, s, "tiny", 1, 1e-300, 1)
	require.Greater(t, wait, 30*365*24*time.Hour, "a token every 1e300s is decades away at least")
	ttl, err := c.PTTL(t.Context(), s.Key("tiny")).Result()
	require.NoError(t, err)
	require.Greater(t, ttl, time.Duration(0), "the bucket expires some day")
	for i := range 100 {
		require.Zero(t, take(t, s, "fast", 1, 1e12, 1), "Take #%d at 1e12/s", i+1)
	}
	correct(t, s, "tiny", throttle.Correction{Limit: 1e-300, Burst: 1, SetTokens: true, Tokens: -math.MaxFloat64})
	correct(t, s, "tiny", throttle.Correction{Limit: 1e-300, Burst: 1, SetTokens: true, Tokens: math.Inf(1)})
	wait = take(t, s, "tiny", 1, 1e-300, 1)
	require.Greater(t, wait, 30*365*24*time.Hour, "a correction to +Inf tokens lowers nothing, and so raises nothing")
	require.NoError(t, c.Del(t.Context(), s.Key("tiny")).Err())
	require.Zero(t, take(t, s, "tiny", 1, 1e-300, 1), "Take from a bucket made afresh")
	correct(t, s, "tiny", throttle.Correction{Hold: math.MaxInt64})
	wait = take(t, s, "tiny", 1, rate.Inf, 1)
	require.Greater(t, wait, 100*365*24*time.Hour, "held for ever")
}

func TestTakeUnlimited(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	for i := range 100 {
		require.Zero(t, take(t, s, "k", 1000, rate.Inf, 1), "Take #%d at rate.Inf", i+1)
	}
	n, err := c.Exists(t.Context(), s.Key("k")).Result()
	require.NoError(t, err)
	require.Zero(t, n, "an unlimited bucket that was never held is not stored")

	correct(t, s, "k", throttle.Correction{Hold: time.Second})
	requireWait(t, take(t, s, "k", 1, rate.Inf, 1), 500*time.Millisecond, time.Second)
}

// Eight goroutines hammer one key; the admissions must never exceed what
// the bucket allows over the elapsed time.
func TestTakeConcurrent(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	const limit, burst = 200, 10
	const workers, run = 8, 300 * time.Millisecond
	var admitted, refused atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for time.Since(start) < run {
				wait, err := s.Take(t.Context(), "k", 1, limit, burst)
				if !assert.NoError(t, err) {
					return
				}
				if wait == 0 {
					admitted.Add(1)
				} else {
					refused.Add(1)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	most := burst + limit*elapsed.Seconds()
	t.Logf("%d admitted, %d refused in %v (at most %.1f allowed)", admitted.Load(), refused.Load(), elapsed, most)
	require.LessOrEqual(t, float64(admitted.Load()), most, "admitted more than burst + limit·elapsed")
	require.GreaterOrEqual(t, admitted.Load(), int64(burst), "admitted less than a full bucket")
	require.Positive(t, refused.Load(), "never refused: the test did not reach the limit")
}

func TestCorrectLowers(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	const limit, burst = 1, 10
	correct(t, s, "k", throttle.Correction{Limit: limit, Burst: burst, SetTokens: true, Tokens: 3})
	for i := range 3 {
		require.Zero(t, take(t, s, "k", 1, limit, burst), "Take #%d after lowering to 3 tokens", i+1)
	}
	requireWait(t, take(t, s, "k", 1, limit, burst), 500*time.Millisecond, time.Second)
	// Lowering never raises.
	correct(t, s, "k", throttle.Correction{Limit: limit, Burst: burst, SetTokens: true, Tokens: 8})
	requireWait(t, take(t, s, "k", 1, limit, burst), 500*time.Millisecond, time.Second)
}

func TestCorrectNegativeTokens(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	const limit, burst = 1, 5
	correct(t, s, "k", throttle.Correction{Limit: limit, Burst: burst, SetTokens: true, Tokens: -2})
	// From -2 tokens, one is three intervals away.
	requireWait(t, take(t, s, "k", 1, limit, burst), 2500*time.Millisecond, 3*time.Second)
}

func TestHold(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	const limit, burst = 1, 1

	t.Run("blocks a full bucket", func(t *testing.T) {
		correct(t, s, "full", throttle.Correction{Hold: 2 * time.Second})
		requireWait(t, take(t, s, "full", 1, limit, burst), 1500*time.Millisecond, 2*time.Second)
		// A shorter hold does not shorten it.
		correct(t, s, "full", throttle.Correction{Hold: time.Millisecond})
		requireWait(t, take(t, s, "full", 1, limit, burst), 1500*time.Millisecond, 2*time.Second)
	})
	t.Run("ends", func(t *testing.T) {
		correct(t, s, "short", throttle.Correction{Hold: 50 * time.Millisecond})
		wait := take(t, s, "short", 1, limit, burst)
		requireWait(t, wait, 0, 50*time.Millisecond)
		time.Sleep(wait)
		require.Zero(t, take(t, s, "short", 1, limit, burst), "Take after the hold's %v", wait)
	})
	t.Run("covers the token wait", func(t *testing.T) {
		const limit = 0.25 // a token every 4s
		require.Zero(t, take(t, s, "empty", 1, limit, burst))
		// A held bucket does not refill: the token wait starts at the
		// hold's end.
		correct(t, s, "empty", throttle.Correction{Limit: limit, Burst: burst, Hold: time.Second})
		requireWait(t, take(t, s, "empty", 1, limit, burst), 4*time.Second, 5*time.Second)
		// A longer hold with no limit named, which puts off no refill: the
		// hold counts.
		correct(t, s, "empty", throttle.Correction{Hold: 8 * time.Second})
		requireWait(t, take(t, s, "empty", 1, limit, burst), 7*time.Second, 8*time.Second)
	})
	t.Run("with tokens", func(t *testing.T) {
		// Lowered to 0 tokens (1s from one) and held for 300ms, in one
		// call: the token comes a second after the hold.
		correct(t, s, "both", throttle.Correction{Limit: limit, Burst: 5, SetTokens: true, Tokens: 0, Hold: 300 * time.Millisecond})
		requireWait(t, take(t, s, "both", 1, limit, 5), time.Second, 1300*time.Millisecond)
	})
}

// The bucket is one hash in Redis time, with an expiry that outlives what it
// remembers, and no more.
func TestStorage(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := t.Context()
	const limit, burst = 1, 10
	require.Zero(t, take(t, s, "k", 4, limit, burst))

	now, err := c.Time(ctx).Result()
	require.NoError(t, err)
	f, err := c.HGetAll(ctx, s.Key("k")).Result()
	require.NoError(t, err)
	require.Equal(t, "6", f["tokens"], "10 tokens less the 4 taken")
	atMicros, err := strconv.ParseFloat(f["at"], 64)
	require.NoError(t, err, "field at = %q", f["at"])
	since := time.Duration(now.UnixMicro()-int64(atMicros)) * time.Microsecond
	require.Truef(t, 0 <= since && since < time.Second, "at is %v before Redis TIME, want the instant of the take", since)

	ttl, err := c.PTTL(ctx, s.Key("k")).Result()
	require.NoError(t, err)
	require.Truef(t, 4*time.Second < ttl && ttl <= 5*time.Second, "PTTL = %v, want until full again (4s) plus a 1s margin", ttl)

	correct(t, s, "k", throttle.Correction{Hold: time.Minute})
	ttl, err = c.PTTL(ctx, s.Key("k")).Result()
	require.NoError(t, err)
	require.Truef(t, time.Minute < ttl && ttl <= time.Minute+time.Second, "PTTL = %v, want the hold (1m) plus a 1s margin", ttl)
}

func TestKeyHasHashTag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		prefix, key, want string
	}{
		{"", "api.github.com", "{throttle:api.github.com}"},
		{"app", "k", "{app:k}"},
		{"", "", "{throttle:}"},
	} {
		s := redisstore.New(nil, redisstore.Options{Prefix: tc.prefix})
		got := s.Key(tc.key)
		assert.Equal(t, tc.want, got, "Options{Prefix: %q}.Key(%q)", tc.prefix, tc.key)
		// Redis Cluster hashes only what lies between the first { and the
		// next }: here, the whole name, so the bucket has one slot.
		open := strings.IndexByte(got, '{')
		end := strings.IndexByte(got[open+1:], '}')
		assert.Truef(t, open == 0 && end == len(got)-2, "Key(%q) = %q: the hash tag is not the whole name", tc.key, got)
	}
}

// The scripts' arguments carry no client time: only the count, the rate and
// the burst, or the correction.
func TestArgsCarryNoTime(t *testing.T) {
	t.Parallel()
	addr, _, _ := redistest.Start(t)
	c := newClient(t, addr)
	var mu sync.Mutex
	var sent [][]any
	c.AddHook(argsHook{func(args []any) { mu.Lock(); sent = append(sent, args); mu.Unlock() }})
	s := redisstore.New(c, redisstore.Options{})
	take(t, s, "k", 2, 4, 8)
	correct(t, s, "k", throttle.Correction{Limit: 4, Burst: 8, SetTokens: true, Tokens: 3, Hold: time.Second, Spent: 2 * time.Second, Sent: 5 * time.Millisecond})

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, sent)
	var scripts [][]any
	for _, a := range sent {
		if cmd := strings.ToLower(a[0].(string)); cmd == "evalsha" || cmd == "eval" {
			scripts = append(scripts, a[3:]) // past the command, script and key count
		}
	}
	// Each script goes as EVALSHA, then as EVAL since a new server has
	// not cached it.
	take, correct := []any{"{throttle:k}", 2, 250000.0, 8}, []any{"{throttle:k}", 250000.0, 8, 1, 3.0, 1e6, 2e6, 5000.0}
	assert.Equal(t, [][]any{take, take, correct, correct}, scripts, "the scripts' keys and arguments")
}

type argsHook struct{ f func([]any) }

func (h argsHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h argsHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.f(cmd.Args())
		return next(ctx, cmd)
	}
}
func (h argsHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A correction reads as the same count to every caller when it is made,
// whatever rate each refills at: a slow process's answer lowers a fast
// process's bucket to what the server said, not to a count scaled by the
// ratio of their rates.
func TestCorrectionReadsAlikeAtEveryRate(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	const burst = 10
	correct(t, s, "k", throttle.Correction{Limit: 1, Burst: burst, SetTokens: true, Tokens: 2})
	// At 4 per second, from the same 2 tokens: a GCRA instant ("full again
	// in 8 s") would read as 10 - 8·4 = -22 tokens at this rate.
	require.Zero(t, take(t, s, "k", 2, 4, burst), "the 2 tokens the correction left, at a faster rate")
	requireWait(t, take(t, s, "k", 1, 4, burst), 0, 250*time.Millisecond)
	// And at the slow rate, the same empty bucket.
	requireWait(t, take(t, s, "k", 1, 1, burst), 500*time.Millisecond, time.Second)
}

// A bucket that an earlier version of the package wrote as tat, the instant
// it is full again, is read from that and rewritten as a count.
func TestStorageFromTat(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := t.Context()
	now, err := c.Time(ctx).Result()
	require.NoError(t, err)
	// Full again in 4.5 s at 1 per second: 5.5 of 10 tokens.
	tat := now.Add(4500 * time.Millisecond).UnixMicro()
	require.NoError(t, c.HSet(ctx, s.Key("k"), "tat", tat, "hold", 0).Err())
	require.Zero(t, take(t, s, "k", 5, 1, 10))
	requireWait(t, take(t, s, "k", 1, 1, 10), 0, 500*time.Millisecond)
	f, err := c.HGetAll(ctx, s.Key("k")).Result()
	require.NoError(t, err)
	require.NotContains(t, f, "tat", "rewritten as a count")
	require.Contains(t, f, "tokens")
}

// A hold alone from a caller with no limit leaves the tokens as they are,
// and the bucket's expiry no earlier than the tokens need.
func TestHoldKeepsTokens(t *testing.T) {
	t.Parallel()
	s, c := newStore(t)
	ctx := t.Context()
	require.Zero(t, take(t, s, "k", 5, 1, 10)) // full again in 5 s
	correct(t, s, "k", throttle.Correction{Hold: 100 * time.Millisecond})
	ttl, err := c.PTTL(ctx, s.Key("k")).Result()
	require.NoError(t, err)
	require.Truef(t, 4*time.Second < ttl, "PTTL = %v, want the 5 s the tokens need, not the hold's", ttl)
	time.Sleep(150 * time.Millisecond)
	require.Zero(t, take(t, s, "k", 5, 1, 10), "the 5 tokens left before the hold")
	requireWait(t, take(t, s, "k", 1, 1, 10), 500*time.Millisecond, time.Second)
}

// A spent hold (the server said nothing is left until its reset) holds
// every caller, and is replaced by the answer to a request sent after it
// was set, which may end it; an answer to a request sent before only
// lengthens it. A refusal's hold is not replaced.
func TestSpentHold(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	const limit, burst = 10, 10
	lowered := func(spent, sent time.Duration) throttle.Correction {
		return throttle.Correction{Limit: limit, Burst: burst, SetTokens: true, Tokens: 5, Spent: spent, Sent: sent}
	}
	correct(t, s, "k", lowered(5*time.Second, time.Millisecond))
	requireWait(t, take(t, s, "k", 1, limit, burst), 4*time.Second, 5*time.Second)
	// A request sent a minute ago (before the hold was set) cannot end it.
	correct(t, s, "k", lowered(0, time.Minute))
	requireWait(t, take(t, s, "k", 1, limit, burst), 4*time.Second, 5*time.Second)
	// Nor shorten it; it may lengthen it.
	correct(t, s, "k", lowered(time.Second, time.Minute))
	requireWait(t, take(t, s, "k", 1, limit, burst), 4*time.Second, 5*time.Second)
	correct(t, s, "k", lowered(7*time.Second, time.Minute))
	requireWait(t, take(t, s, "k", 1, limit, burst), 6*time.Second, 7*time.Second)
	// An answer to a request sent since says what is left: held a
	// second less, then not at all.
	time.Sleep(10 * time.Millisecond)
	correct(t, s, "k", lowered(time.Second, 5*time.Millisecond))
	requireWait(t, take(t, s, "k", 1, limit, burst), 0, time.Second)
	time.Sleep(10 * time.Millisecond)
	correct(t, s, "k", lowered(0, 5*time.Millisecond))
	require.Zero(t, take(t, s, "k", 1, limit, burst), "the spent hold ended, 5 tokens left")

	// At rate.Inf a correction leaves the tokens alone, but its answer
	// still replaces the spent hold.
	correct(t, s, "inf", throttle.Correction{Limit: limit, Burst: burst, SetTokens: true, Tokens: 0, Spent: 5 * time.Second, Sent: time.Millisecond})
	time.Sleep(10 * time.Millisecond)
	correct(t, s, "inf", throttle.Correction{Limit: rate.Inf, Burst: burst, SetTokens: true, Tokens: 5, Sent: 5 * time.Millisecond})
	// Its tokens, lowered to 0, were not to refill before the hold's end;
	// ended, they refill from now: one in a tenth of a second.
	requireWait(t, take(t, s, "inf", 1, limit, burst), 0, 100*time.Millisecond)
	// And a hold alone, with Sent, replaces nothing: it says nothing left.
	correct(t, s, "h", lowered(5*time.Second, time.Millisecond))
	time.Sleep(10 * time.Millisecond)
	correct(t, s, "h", throttle.Correction{Hold: time.Millisecond, Sent: 5 * time.Millisecond})
	requireWait(t, take(t, s, "h", 1, limit, burst), 4*time.Second, 5*time.Second)

	// A refusal's hold stays whatever comes after.
	correct(t, s, "r", throttle.Correction{Hold: 3 * time.Second})
	time.Sleep(10 * time.Millisecond)
	correct(t, s, "r", lowered(0, 5*time.Millisecond))
	requireWait(t, take(t, s, "r", 1, limit, burst), 2*time.Second, 3*time.Second)
}

// A held bucket does not refill until its hold ends, whichever hold it is:
// what it filled meanwhile would go at once when the hold ends.
func TestHeldDoesNotRefill(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	const limit, burst = 10, 10
	for key, c := range map[string]throttle.Correction{
		"hold":  {Limit: limit, Burst: burst, Hold: 500 * time.Millisecond},
		"spent": {Limit: limit, Burst: burst, SetTokens: true, Tokens: 0, Spent: 500 * time.Millisecond, Sent: time.Millisecond},
	} {
		require.Zero(t, take(t, s, key, burst, limit, burst))
		correct(t, s, key, c)
		time.Sleep(550 * time.Millisecond)
		// Half a second of refill, had it gone on, would be 5 tokens;
		// from the hold's end, under one.
		requireWait(t, take(t, s, key, 3, limit, burst), 0, 300*time.Millisecond)
	}
}

// A killed server fails calls promptly, and a restarted one serves them
// again.
func TestRedisDown(t *testing.T) {
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
			addr, stop, restart := redistest.Start(t)
			tc.opt.Addr = addr
			c := redis.NewClient(&tc.opt)
			t.Cleanup(func() { c.Close() })
			// Calls fail after about the timeout (go-redis redials until
			// then); prompt leaves room for a loaded machine, and is still
			// far below go-redis's own 5s timeouts.
			const timeout, prompt = 200 * time.Millisecond, 1500 * time.Millisecond
			s := redisstore.New(c, redisstore.Options{Timeout: timeout})
			take(t, s, "k", 1, 10, 10)

			stop()
			start := time.Now()
			_, err := s.Take(t.Context(), "k", 1, 10, 10)
			elapsed := time.Since(start)
			require.Error(t, err, "Take with the server down")
			assert.True(t, strings.HasPrefix(err.Error(), "redisstore: "), "error %q lacks the package prefix", err)
			require.Less(t, elapsed, prompt, "Take failed in %v, not within the timeout: %v", elapsed, err)

			start = time.Now()
			err = s.Correct(t.Context(), "k", throttle.Correction{Hold: time.Second})
			elapsed = time.Since(start)
			require.Error(t, err, "Correct with the server down")
			require.Less(t, elapsed, prompt, "Correct failed in %v, not within the timeout: %v", elapsed, err)

			restart()
			require.Eventually(t, func() bool {
				wait, err := s.Take(t.Context(), "k", 1, 10, 10)
				return err == nil && wait == 0
			}, 5*time.Second, 10*time.Millisecond, "Take never succeeded after the restart")
		})
	}
}

// A server that accepts connections and never answers is bounded by the
// timeout when the client honours contexts.
func TestRedisHung(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var conns sync.WaitGroup
	conns.Go(func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	})
	t.Cleanup(func() { l.Close(); conns.Wait() })

	c := newClient(t, l.Addr().String())
	const timeout = 100 * time.Millisecond
	s := redisstore.New(c, redisstore.Options{Timeout: timeout})
	start := time.Now()
	_, err = s.Take(t.Context(), "k", 1, 10, 10)
	elapsed := time.Since(start)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, elapsed, timeout+time.Second, "Take against a hung server took %v", elapsed)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err = s.Correct(ctx, "k", throttle.Correction{Hold: time.Second})
	assert.ErrorIs(t, err, context.Canceled, "Correct with a cancelled context")
}
