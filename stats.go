package throttle

import (
	"time"

	"golang.org/x/time/rate"
)

// BucketStats is a snapshot of a bucket: its state now and what it has done
// since it was made. Counts are of calls (a WaitN of 5 tokens counts once).
type BucketStats struct {
	Limit    rate.Limit // current rate; rate.Inf: none
	Burst    int        // current capacity
	Tokens   float64    // tokens now; negative after a correction
	Queued   int        // callers waiting now
	InFlight int        // requests begun (Begin, Transport) and not yet answered
	Learning bool       // no answer from the server yet (Config.Limit 0)

	Admitted uint64        // callers admitted, at once or after waiting
	Waited   uint64        // of those, the callers that had to queue
	WaitTime time.Duration // total time those callers waited

	RefusedFull    uint64 // refused with ErrQueueFull
	RefusedTooLong uint64 // refused with ErrWaitTooLong, at admission or re-planned
	RefusedBurst   uint64 // refused with ErrExceedsBurst
	// Canceled counts the callers whose context ended while they waited,
	// those granted their tokens just as it ended included: they give the
	// tokens back and are counted here, not as admitted.
	Canceled uint64

	Cooldowns     uint64    // times the server put the bucket into a cooldown
	CooldownUntil time.Time // end of the current cooldown; zero if none
	Corrections   uint64    // answers whose Remaining allowed less than the bucket would have admitted
	// Drift is the local estimate minus the server's count at the last
	// correction (tokens before it minus what the server's cap left):
	// positive when the bucket thought it had more than the server allowed.
	// A correction of a bucket with no local limit yet (one still learning
	// its rate) leaves it unchanged: such a bucket made no estimate.
	Drift float64
}

// add folds o into s, for totals over several buckets.
func (s *BucketStats) add(o BucketStats) {
	s.Tokens += o.Tokens
	s.Queued += o.Queued
	s.InFlight += o.InFlight
	s.Admitted += o.Admitted
	s.Waited += o.Waited
	s.WaitTime += o.WaitTime
	s.RefusedFull += o.RefusedFull
	s.RefusedTooLong += o.RefusedTooLong
	s.RefusedBurst += o.RefusedBurst
	s.Canceled += o.Canceled
	s.Cooldowns += o.Cooldowns
	s.Corrections += o.Corrections
	if o.CooldownUntil.After(s.CooldownUntil) {
		s.CooldownUntil = o.CooldownUntil
	}
}

// counters are a bucket's counts; they are guarded by Bucket.mu, except
// those the lock-free path keeps (Bucket.admitted).
type counters struct {
	waited                             uint64
	waitTime                           float64
	refusedFull, refusedLong, refBurst uint64
	canceled, cooldowns, corrections   uint64
	drift                              float64
	// givenBack counts the calls granted and then given back: Admitted
	// leaves them out, the sequence numbers (Bucket.admitted) do not.
	givenBack uint64
}

// uncountLocked counts a waiter granted its tokens as its context ended, which
// gave them back, as cancelled rather than admitted: each caller is counted
// once.
func (b *Bucket) uncountLocked(w *waiter) {
	b.stats.givenBack++
	b.stats.waited--
	b.stats.waitTime -= w.waited
	b.stats.canceled++
}

// Stats returns a snapshot of the bucket.
func (b *Bucket) Stats() BucketStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.ownLocked()
	defer b.releaseLocked(now)
	s := BucketStats{
		Limit:          b.limit,
		Burst:          b.burst,
		Tokens:         b.tokensNowLocked(now),
		Queued:         b.q.len,
		InFlight:       int(b.inflight.Load()),
		Learning:       b.learning,
		Admitted:       b.count() - b.extra.Load() - b.stats.givenBack,
		Waited:         b.stats.waited,
		WaitTime:       time.Duration(b.stats.waitTime),
		RefusedFull:    b.stats.refusedFull,
		RefusedTooLong: b.stats.refusedLong,
		RefusedBurst:   b.stats.refBurst,
		Canceled:       b.stats.canceled,
		Cooldowns:      b.stats.cooldowns,
		Corrections:    b.stats.corrections,
		Drift:          b.stats.drift,
	}
	if b.hold > now {
		s.CooldownUntil = b.wall(b.hold)
	}
	return s
}

// Stats returns a snapshot of every bucket, by key, and their total.
func (t *Transport) Stats() TransportStats {
	t.mu.Lock()
	bs := make(map[string]*Bucket, len(t.buckets))
	for _, e := range t.buckets {
		bs[e.b.name] = e.b
	}
	gates := make(map[string]*gate, len(t.gates))
	for id, g := range t.gates {
		gates[id.name()] = g
	}
	t.mu.Unlock()
	s := TransportStats{Keys: make(map[string]BucketStats, len(bs))}
	for k, b := range bs {
		st := b.Stats()
		if g := gates[k]; g != nil {
			st.Queued += g.queued() // with Meters, the key's requests wait in its gate
		}
		s.Keys[k] = st
		s.Total.add(st)
	}
	return s
}

// TransportStats is a snapshot of a [Transport]'s buckets.
type TransportStats struct {
	// Total sums over every bucket (rates and bursts left zero). With
	// Meters, a request is counted once per bucket it took from, and
	// Tokens adds up tokens of different units.
	Total BucketStats

	// Keys holds the buckets by name: the key (a host, unless
	// Transport.Key says otherwise), then "#" and the scope for a scope the
	// server named ("api.github.com#search"), or "##" and the unit for a
	// Meter's bucket ("api.openai.com##requests"). A '\' or '#' in the key
	// or scope is escaped by a '\' (the key "h#core" is named `h\#core`),
	// so the first '#' not escaped starts the scope and no two buckets share
	// a name. Config.Name, events and RefusedError.Key use the same names.
	// With Meters, the key's bucket counts in Queued the requests waiting in
	// the key's queue.
	Keys map[string]BucketStats
}
