// Package redisstore keeps the shared buckets of package throttle in Redis,
// so that processes and machines calling one API with one key stay inside one
// quota.
//
// A [Store] implements [throttle.Store]. It keeps no state of its own: each
// bucket is one Redis hash holding a token count and instants in Redis's own
// clock, and every change is one Lua script run atomically on the server.
// The limit and burst come from the calling process on each call, so replicas
// that agree on them need no other coordination, and their clocks need not
// agree.
//
// # Cost
//
// [Store.Take] and [Store.Correct] each cost one round trip: one EVALSHA,
// whose script does a handful of O(1) commands. The first call after a
// server starts (or flushes its scripts) costs a second one, EVAL, which
// caches the script again. Nothing runs in the background.
//
// # Keys
//
// The bucket named key lives in the hash "{Prefix:key}" (see [Store.Key]).
// The braces are a Redis Cluster hash tag: the whole bucket is in one slot,
// so the store works unchanged on a cluster client. The hash has the fields
// tokens, the count at the instant at; hold, the end of a refusal's hold; and
// spent and spent_at, the end of a spent hold (nothing left until a reset)
// and when it was set: instants in microseconds since 1970 of Redis time.
// Each caller reads the count as refilled at its own limit since at, so a
// correction reads as the same count to every process at once, whatever rate
// each paces at; a held bucket does not refill. The hash expires once the
// bucket would be full again and the holds are over (plus a second), so idle
// buckets vanish; a missing bucket is full. A hash of an earlier version of
// this package, which kept only the instant the bucket is full again (tat),
// is read from that and rewritten in the new form.
//
// The scripts compute in doubles, exact for instants in microseconds; TIME
// resolves a microsecond, so a rate above a million tokens per second refills
// in steps of a microsecond.
//
// # Failures
//
// Every call is bounded by [Options.Timeout] (and by its context). A caller
// of a Store falls back to limiting locally when it fails, so failing fast
// matters more than waiting out a slow server. While the server is down,
// go-redis keeps redialling until the deadline, so each call fails after
// about the timeout. go-redis applies a context's deadline to reads and
// writes on an open connection only if the client was created with
// ContextTimeoutEnabled; without it, a server that keeps its connections
// and never answers (stopped, hung) would hold a call for the client's
// ReadTimeout (seconds), so the store then runs each call on a goroutine of
// its own and stops waiting for it at the deadline: the call fails on time,
// and its goroutine and connection stay busy until go-redis gives up.
// ContextTimeoutEnabled spares that goroutine. Errors start with
// "redisstore:" and wrap the Redis or context error.
//
// A FLUSHALL (or a restart of a server that does not persist) empties
// every bucket, and an empty bucket reads as full and free, exactly as one
// that expired once idle: the store cannot tell them apart, and reports
// nothing. The processes may then spend one burst at once, and a hold set
// after a 429 ends early for the processes that did not see the 429
// themselves (those that did keep it locally); the next 429 sets it again.
//
// # Requirements
//
// Redis 3.2 or later. Scripts that read TIME and then write need effects
// replication, the only mode since Redis 5; on 3.2 to 4 the scripts switch
// it on with redis.replicate_commands(), and skip that call where it no
// longer exists. The tests run against Redis 7.
package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"github.com/go-throttle/throttle"
)

// Defaults applied by [New] to the zero fields of [Options].
const (
	// DefaultPrefix starts the name of every bucket when Options.Prefix is
	// empty.
	DefaultPrefix = "throttle"
	// DefaultTimeout bounds each call when Options.Timeout is zero.
	DefaultTimeout = 200 * time.Millisecond
)

// Options configure a [Store]. The zero value is ready to use.
type Options struct {
	// Prefix starts the Redis key of every bucket, so that several
	// applications can share one Redis; see [Store.Key]. Empty means
	// [DefaultPrefix].
	Prefix string

	// Timeout bounds each call to Redis when the context has no earlier
	// deadline, whatever the client's options (see the package
	// documentation on ContextTimeoutEnabled). Zero means [DefaultTimeout];
	// negative means no bound beyond the context's.
	Timeout time.Duration
}

// A Store keeps token buckets in Redis for several processes to share. It
// implements [throttle.Store] with a token bucket kept as a count at an
// instant, evaluated in Redis by Lua scripts against Redis's clock, so that
// every change is atomic and the processes' clocks do not matter.
//
// A Store is safe for concurrent use, holds nothing but its configuration,
// and costs one round trip per call. Create one with [New]; a nil or zero
// Store returns an error from every call.
type Store struct {
	c       redis.UniversalClient
	prefix  string
	timeout time.Duration // <= 0: none
}

var _ throttle.Store = (*Store)(nil)

// New returns a store that keeps its buckets in the Redis that c talks to:
// a single server, a cluster, a ring or a failover client. The store does
// not close c.
func New(c redis.UniversalClient, o Options) *Store {
	s := &Store{c: c, prefix: o.Prefix, timeout: o.Timeout}
	if s.prefix == "" {
		s.prefix = DefaultPrefix
	}
	if s.timeout == 0 {
		s.timeout = DefaultTimeout
	}
	return s
}

// Key returns the Redis key of the bucket named key: "{Prefix:key}", a hash
// whose braces make the whole name its Redis Cluster hash tag.
func (s *Store) Key(key string) string { return "{" + s.prefix + ":" + key + "}" }

var errNoClient = errors.New("redisstore: no Redis client (use New)")

// maxInterval caps the interval between tokens (about 31 years), so that no
// product in the scripts overflows to infinity whatever the limit.
const maxInterval = 1e15 // µs

// interval returns the µs between tokens at limit, 0 for rate.Inf.
func interval(limit rate.Limit) (float64, error) {
	switch {
	case limit == rate.Inf:
		return 0, nil
	case !(limit > 0): // also NaN
		return 0, fmt.Errorf("redisstore: limit %v: must be positive", float64(limit))
	}
	return min(1e6/float64(limit), maxInterval), nil
}

// Take takes n tokens from the bucket key, which refills at limit tokens per
// second up to burst tokens (a new bucket is full), if they are there and
// the bucket is not held. It returns 0 when it took them. Otherwise it takes
// nothing and returns how long until n tokens could be there and any hold
// be over, rounded up to the microsecond.
//
// With limit [rate.Inf] only a hold can refuse; Take still asks Redis, since
// a hold set by any process (after a 429) applies to all of them.
//
// Take returns an error, without calling Redis, when n < 1, when limit is
// not positive, or when n exceeds burst at a finite limit (that error
// matches [throttle.ErrExceedsBurst]): no wait would ever satisfy them.
func (s *Store) Take(ctx context.Context, key string, n int, limit rate.Limit, burst int) (time.Duration, error) {
	if s == nil || s.c == nil {
		return 0, errNoClient
	}
	iv, err := interval(limit)
	switch {
	case err != nil:
		return 0, err
	case n < 1:
		return 0, fmt.Errorf("redisstore: take %d tokens from %q: n must be at least 1", n, key)
	case iv > 0 && n > burst:
		return 0, fmt.Errorf("redisstore: take %d tokens from %q with burst %d: %w", n, key, burst, throttle.ErrExceedsBurst)
	}
	ctx, cancel := s.context(ctx)
	defer cancel()
	us, err := s.run(ctx, takeScript, key, n, iv, burst).Int64()
	if err != nil {
		return 0, wrap(ctx, "take from", key, err)
	}
	return micros(us), nil
}

// Correct applies what a server said about the quota to the bucket key: it
// lowers the tokens (c.SetTokens), holds the bucket (c.Hold), and sets,
// lengthens or ends the spent hold (c.Spent, c.Sent), as documented on
// [throttle.Correction], in one atomic step. A correction that says nothing
// returns nil at once. c.Limit and c.Burst matter with c.SetTokens: then
// c.Limit must be positive, and at [rate.Inf] the tokens are left alone (a
// bucket without a limit is always full), so only the holds apply. A held
// bucket does not refill until its holds end (the refill is reckoned at c.Limit
// where it is valid).
func (s *Store) Correct(ctx context.Context, key string, c throttle.Correction) error {
	if s == nil || s.c == nil {
		return errNoClient
	}
	if !c.SetTokens && c.Hold <= 0 && c.Spent <= 0 {
		return nil
	}
	// lower 1 lowers the tokens, 0 leaves them alone. A hold from a caller
	// with a limit stops the refill until it ends; without a valid limit
	// and burst (a hold alone may come with none), the tokens stay as they
	// are.
	lower, iv, tokens := 0, 0.0, 0.0
	if c.SetTokens {
		var err error
		if iv, err = interval(c.Limit); err != nil {
			return err
		}
		switch {
		case iv > 0 && c.Burst < 1:
			return fmt.Errorf("redisstore: correct %q: burst %d: must be at least 1", key, c.Burst)
		case math.IsNaN(c.Tokens):
			return fmt.Errorf("redisstore: correct %q: tokens NaN", key)
		case iv > 0:
			lower = 1
			// Beyond these bounds a count means "none" or "full" all the
			// same, and keeping it finite keeps the scripts' arithmetic
			// finite.
			tokens = min(max(c.Tokens, -maxInterval), float64(c.Burst))
		}
	} else if i, err := interval(c.Limit); err == nil && c.Burst >= 1 {
		iv = i
	}
	// Only a correction that says what is left may replace a spent hold,
	// whatever the limit (at rate.Inf it leaves the tokens alone).
	sent := 0.0
	if c.SetTokens {
		sent = ceilMicros(c.Sent)
	}
	ctx, cancel := s.context(ctx)
	defer cancel()
	err := s.run(ctx, correctScript, key, iv, c.Burst, lower, tokens, ceilMicros(c.Hold), ceilMicros(c.Spent), sent).Err()
	if err != nil {
		return wrap(ctx, "correct", key, err)
	}
	return nil
}

// run runs script on the bucket key and stops waiting for it when ctx
// ends. go-redis applies a context's deadline to the reads and writes of
// an open connection only if the client was created with
// ContextTimeoutEnabled: otherwise a server that keeps its connections and
// never answers (stopped by SIGSTOP, swapping, hung) would hold the call
// for the client's ReadTimeout, and then its retries. Such a client's call
// runs on a goroutine of its own, which ends when go-redis gives up on it;
// the caller gets ctx's error at once.
func (s *Store) run(ctx context.Context, script *redis.Script, key string, args ...any) *redis.Cmd {
	keys := []string{s.Key(key)}
	if ctx.Done() == nil || honoursContext(s.c) {
		return script.Run(ctx, s.c, keys, args...)
	}
	done := make(chan *redis.Cmd, 1)
	go func() { done <- script.Run(ctx, s.c, keys, args...) }()
	select {
	case cmd := <-done:
		return cmd
	case <-ctx.Done():
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(ctx.Err())
		return cmd
	}
}

// honoursContext reports whether c applies a context's deadline to the
// reads and writes of its connections.
func honoursContext(c redis.UniversalClient) bool {
	switch c := c.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		return c.Options().ContextTimeoutEnabled
	}
	return false
}

// context bounds ctx by the store's timeout, unless its own deadline is
// sooner (sparing a timer on the hot path).
func (s *Store) context(ctx context.Context) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if s.timeout <= 0 || (ok && time.Until(d) <= s.timeout) {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.timeout)
}

// wrap names the call in err, and adds the context's error when that is
// why the call failed but go-redis reported it otherwise (as a socket
// timeout, say).
func wrap(ctx context.Context, op, key string, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("redisstore: %s %q: %w: %w", op, key, cerr, err)
	}
	return fmt.Errorf("redisstore: %s %q: %w", op, key, err)
}

// ceilMicros converts d to whole µs for a script, rounded up; 0 if d is not
// positive.
func ceilMicros(d time.Duration) float64 {
	return math.Ceil(float64(max(d, 0)) / float64(time.Microsecond))
}

// micros converts a wait in µs from a script to a Duration.
func micros(us int64) time.Duration {
	return time.Duration(min(max(us, 0), maxWaitMicros)) * time.Microsecond
}
