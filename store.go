package throttle

import (
	"context"
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
	// hold be over.
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
	Hold time.Duration
}
