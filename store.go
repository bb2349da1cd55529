package throttle

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// A Store keeps the token state of buckets that several processes share, so
// that replicas calling one API with one key stay inside one quota. Package
// redisstore implements it on Redis.
//
// A bucket in a store is named by its key and described, on every call, by the
// limit and burst of the calling process's [Bucket]: the store keeps only the
// state (how many tokens the bucket held at an instant, and until when it is
// held), and changes it atomically. Each caller reads the tokens as refilled at
// its own limit since that instant, so a correction means the same count to
// every process when it is made, however fast each paces. Times are the store's
// own clock, so the clocks of the processes need not agree. A store must be
// safe for concurrent use; its methods should return promptly with an error
// when the store is unreachable, since the caller then falls back to limiting
// locally.
type Store interface {
	// Take takes n tokens from the bucket key, which refills at limit tokens
	// per second up to burst tokens (a new bucket is full), if they are there
	// and the bucket is not held. It returns 0 when it took them. Otherwise it
	// takes nothing and returns how long until n tokens could be there and the
	// holds (Correction.Hold, Correction.Spent) be over.
	Take(ctx context.Context, key string, n int, limit rate.Limit, burst int) (wait time.Duration, err error)

	// Correct applies what a server said about the quota to the bucket key.
	Correct(ctx context.Context, key string, c Correction) error
}

// A Correction is what a response said about a shared bucket, as passed to
// [Store.Correct].
type Correction struct {
	Limit rate.Limit // the bucket's rate, tokens per second
	Burst int        // the bucket's capacity

	// When SetTokens is true, the bucket holds at most Tokens from now on
	// (Tokens may be negative: more requests are in flight than the server
	// has left). A correction only ever lowers the tokens: a process counts
	// its own admissions but not the others', so what it would raise the
	// count to could overshoot; the rate refills the bucket.
	SetTokens bool
	Tokens    float64

	// Hold, if positive, holds the bucket for that long from now: no Take
	// succeeds until it ends. A hold never shortens one already in place.
	// It is a refusal's cooldown. A held bucket (Hold or Spent) does not
	// refill until the hold ends: what it would have filled meanwhile,
	// spent at once when the hold ends, is what the server refused.
	Hold time.Duration

	// Spent, if positive, says the server has nothing left for that long
	// from now (Remaining 0 until its reset): no Take succeeds until it
	// ends. Unlike Hold, newer news replaces it. Sent, if positive, is how
	// long before the correction the request was sent whose answer it
	// carries; with SetTokens, a correction whose request was sent after
	// the spent hold was set replaces it with its own Spent (0 ends it):
	// the server has answered since, and its answer is the newer word (a
	// sliding window that gave back before the reset it stated). One whose
	// request was sent before it, or with Sent 0, only lengthens it.
	Spent time.Duration
	Sent  time.Duration
}

// MemoryStore is a [Store] in memory, with the semantics of
// redisstore's: each bucket is a token count at an instant, which each
// caller refills at its own limit, and the holds. Buckets in one process
// that share a MemoryStore share a quota as processes on one Redis do:
// for tests of code that uses [Config.Store], and for Transports that
// cannot share one Bucket. It keeps every bucket it is asked about. The
// zero value is ready to use; a MemoryStore must not be copied after first
// use.
type MemoryStore struct {
	mu      sync.Mutex
	buckets map[string]memoryBucket
}

type memoryBucket struct {
	tokens  float64
	at      time.Time // tokens counted then, refilled after it
	hold    time.Time // Correction.Hold's end
	spent   time.Time // Correction.Spent's end
	spentAt time.Time // when spent was set
	counted bool      // false: full
}

// have returns the tokens of b at now for a caller at limit and burst.
func (b memoryBucket) have(now time.Time, limit rate.Limit, burst int) float64 {
	if !b.counted || limit == rate.Inf {
		return float64(burst)
	}
	return min(float64(burst), b.tokens+max(now.Sub(b.at).Seconds(), 0)*float64(limit))
}

// Take implements [Store]. It returns an error, taking nothing, when n < 1,
// when limit is not positive, or when n exceeds burst at a finite limit
// (that error matches [ErrExceedsBurst]): no wait would ever satisfy them.
func (s *MemoryStore) Take(_ context.Context, key string, n int, limit rate.Limit, burst int) (time.Duration, error) {
	switch {
	case n < 1:
		return 0, fmt.Errorf("throttle: MemoryStore: take %d tokens from %q: n must be at least 1", n, key)
	case !(limit > 0):
		return 0, fmt.Errorf("throttle: MemoryStore: take from %q at limit %v: must be positive", key, float64(limit))
	case limit != rate.Inf && n > burst:
		return 0, fmt.Errorf("throttle: MemoryStore: take %d tokens from %q with burst %d: %w", n, key, burst, ErrExceedsBurst)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now, b := time.Now(), s.buckets[key]
	wait := max(b.hold.Sub(now), b.spent.Sub(now), 0)
	have := b.have(now, limit, burst)
	if short := float64(n) - have; short > 0 && limit != rate.Inf {
		// The refill starts at b.at, the holds' end, if that is to come.
		refill := time.Duration(math.Ceil(short / float64(limit) * float64(time.Second)))
		wait = max(wait, max(b.at.Sub(now), 0)+refill)
	}
	if wait > 0 {
		return wait, nil
	}
	if limit != rate.Inf {
		b.tokens, b.at, b.counted = have-float64(n), now, true
		s.put(key, b)
	}
	return 0, nil
}

// Correct implements [Store]. With c.SetTokens it returns an error,
// changing nothing, when c.Limit is not positive, c.Burst is under 1 at a
// finite limit, or c.Tokens is NaN. Without, c.Limit and c.Burst only say
// how fast a held bucket would have refilled, and are ignored if not valid.
func (s *MemoryStore) Correct(_ context.Context, key string, c Correction) error {
	if c.SetTokens {
		switch {
		case !(c.Limit > 0):
			return fmt.Errorf("throttle: MemoryStore: correct %q at limit %v: must be positive", key, float64(c.Limit))
		case c.Limit != rate.Inf && c.Burst < 1:
			return fmt.Errorf("throttle: MemoryStore: correct %q: burst %d: must be at least 1", key, c.Burst)
		case math.IsNaN(c.Tokens):
			return fmt.Errorf("throttle: MemoryStore: correct %q: tokens NaN", key)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now, b := time.Now(), s.buckets[key]
	have := b.have(now, c.Limit, c.Burst)
	if h := now.Add(c.Hold); c.Hold > 0 && h.After(b.hold) {
		b.hold = h
	}
	// The spent hold: replaced by the answer to a request sent after it
	// was set, else only lengthened.
	end := now.Add(max(c.Spent, 0))
	if c.SetTokens && c.Sent > 0 && now.Add(-c.Sent).After(b.spentAt) || c.Spent > 0 && end.After(b.spent) {
		b.spent, b.spentAt = end, now
	}
	held := laterOf(now, laterOf(b.hold, b.spent))
	switch {
	case c.Limit > 0 && c.Limit != rate.Inf && c.Burst >= 1:
		// Lowered, and refilled from the end of the holds.
		if c.SetTokens {
			have = min(have, c.Tokens)
		}
		b.tokens, b.at, b.counted = have, held, true
	case b.at.After(held):
		// No rate to count by: the tokens stay, but a spent hold ended
		// early frees the refill it had put off.
		b.at = held
	}
	s.put(key, b)
	return nil
}

func (s *MemoryStore) put(key string, b memoryBucket) {
	if s.buckets == nil {
		s.buckets = map[string]memoryBucket{}
	}
	s.buckets[key] = b
}
