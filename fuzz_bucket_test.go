package throttle

import (
	"cmp"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/time/rate"
)

// FuzzBucket drives a bucket with the operations its fuzz input spells
// (Allow, AllowN, WaitN and BeginN with deadlines and cancellations,
// SetLimit, SetBurst, ObserveQuota, a flight's DoneQuota or Done(nil), once
// or twice) in virtual time, and checks what the Bucket documents, whatever
// its adaptation does with the answers:
//
//   - in any window of length T, at most burst + rate×T tokens are granted,
//     rate and burst being the largest in force during it; an answer may
//     say that a new window has begun (its tokens raised up to burst), so
//     windows are not counted across an ObserveQuota;
//   - before the first answer (Config.Limit 0) the limit is not known: one
//     call goes through and the rest wait for the answer; while the bucket
//     learns, one goes at a time, the next when the answer comes or the
//     probe is given up for lost (at least minProbeWait later);
//   - Allow never succeeds while a caller waits, and waiters are served in
//     the order of their priorities with aging: of two waiting at once, the
//     first served is the one that queued first once each is moved back by
//     its priority's lead × Config.Aging;
//   - every WaitN returns, once, with nil or a documented error, and never
//     succeeds after its deadline;
//   - the flights in flight are those begun and not yet done, a flight done
//     twice counted once, and their sequence numbers are kept in order;
//   - nothing panics.
func FuzzBucket(f *testing.F) {
	for _, seed := range bucketFuzzSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, program []byte) {
		if len(program) > 4096 {
			return // long programs test nothing more, only slower
		}
		synctest.Test(t, func(t *testing.T) { runBucketProgram(t, program) })
	})
}

// Operations of a bucket program: each is an opcode byte, a byte of delay
// before it (×10 ms), and its arguments.
const (
	opAllow = iota
	opAllowN
	opWait
	opSetLimit
	opSetBurst
	opObserve
	opDone
	opCount
)

var (
	fuzzBucketConfigs = []Config{
		{Limit: 3, Burst: 4, MaxQueue: 8, MaxWait: 5 * time.Second},
		{MaxWait: 5 * time.Second}, // learns its rate from the answers
		{Limit: 1, Burst: 1, MaxQueue: -1},
		{Limit: 10, Burst: 2, Pace: PaceBurst, MaxCooldown: 30 * time.Second},
		{Limit: 0.5, MaxWait: -1, MaxCooldown: time.Minute},
	}
	fuzzLimits   = []rate.Limit{1, 3, 10, 0.5, 100, rate.Inf}
	fuzzStatuses = []int{http.StatusOK, http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusForbidden}
)

// bucketFuzzSeeds are programs from the table tests (queue_test.go) and the
// sequences of TestBucketProperties' first seeds.
func bucketFuzzSeeds() [][]byte {
	seeds := [][]byte{
		// FIFO and spacing: five waiters of one token at 10/s, burst 1.
		{0, opSetLimit, 0, 2, opSetBurst, 0, 1, opWait, 0, 0, 0, 0, opWait, 0, 0, 0, 0, opWait, 0, 0, 0, 0, opWait, 0, 0, 0, 0, opWait, 0, 0, 0, 0},
		// A weighted head is not overtaken: 4 tokens then 1, and an Allow
		// while they wait.
		{0, opAllowN, 0, 4, opWait, 0, 3, 0, 0, opWait, 0, 0, 0, 0, opAllow, 100},
		// Cancelling the head refunds it and moves the queue up.
		{0, opAllowN, 0, 4, opWait, 0, 3, 0, 5, opWait, 0, 1, 0, 0, opAllow, 200},
		// Re-planned by SetLimit and SetBurst under waiters, one with a
		// deadline.
		{0, opAllowN, 0, 4, opWait, 0, 1, 20, 0, opWait, 0, 1, 0, 0, opSetLimit, 10, 3, opSetBurst, 10, 1, opAllow, 250},
		// Cold start: a probe, a waiter held for its answer, the answer.
		{1, opAllow, 0, opWait, 0, 0, 0, 0, opObserve, 5, 0, 10, 9, 6, 0, 6, opAllowN, 0, 3, opWait, 0, 2, 0, 0},
		// A 429 with Retry-After under a waiter, then a new window.
		{0, opAllowN, 0, 4, opWait, 0, 0, 0, 0, opObserve, 1, 1, 0xff, 0xff, 0, 3, 0, opObserve, 200, 0, 10, 10, 6, 0, 6, opAllowN, 0, 4},
		// PaceBurst learns a burst from the server's limit.
		{3, opObserve, 0, 0, 20, 20, 6, 0, 6, opAllowN, 0, 4, opWait, 0, 3, 0, 0, opSetBurst, 0, 0},
		// Three flights answered out of order, the last twice, then one
		// that had no response (TestCapLeavesOutTheEarlierStillInFlight).
		{0, opWait, 0, 15, 0, 0, opWait, 0, 15, 0, 0, opWait, 0, 15, 0, 0,
			opDone, 0, 2, 0, 20, 17, 2, opDone, 0, 0, 0, 20, 19, 2, opDone, 0, 2, 0, 20, 17, 2, opDone, 0, 1, 0, 0xff},
	}
	// TestBucketProperties' operations (Allow, WaitN with a deadline or a
	// cancellation, SetLimit) with its generator's first seeds.
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 42))
		p := []byte{0}
		for range 200 {
			delay := byte(rng.IntN(20))
			switch op := rng.IntN(10); {
			case op < 4:
				p = append(p, opAllowN, delay, byte(rng.IntN(2)))
			case op < 9:
				p = append(p, opWait, delay, byte(rng.IntN(4)), byte(rng.IntN(40)), byte(rng.IntN(40)))
			default:
				p = append(p, opSetLimit, delay, byte(rng.IntN(4)))
			}
		}
		seeds = append(seeds, p)
	}
	return seeds
}

// A program reads its bytes in order; past the end every byte is zero.
type program struct {
	b []byte
	i int
}

func (p *program) next() byte {
	if p.i >= len(p.b) {
		return 0
	}
	p.i++
	return p.b[p.i-1]
}

func (p *program) done() bool { return p.i >= len(p.b) }

// A grant is tokens granted: when, how many, and in which stretch between
// answers.
type grant struct {
	at      time.Duration
	n       int
	stretch int
}

// A servedWaiter is a waiter granted its tokens: id is the order it queued in.
type servedWaiter struct {
	id         int
	joined, at time.Duration
	p          Priority
}

// A regime is the limit and burst in force from a time on.
type regime struct {
	from  time.Duration
	limit rate.Limit
	burst int
}

func runBucketProgram(t *testing.T, code []byte) {
	p := &program{b: code}
	c := fuzzBucketConfigs[int(p.next())%len(fuzzBucketConfigs)]
	b := NewBucket(c)
	start := time.Now()
	since := func() time.Duration { return time.Since(start) }

	var (
		mu       sync.Mutex
		grants   []grant
		served   []servedWaiter
		stretch  int    // answers observed so far
		learning []bool // by stretch: no answer yet, the limit unknown
		regimes  = []regime{{0, b.Limit(), b.Burst()}}
		wg       sync.WaitGroup
		joined   int
		returned int
		flights  []Flight // begun, in the order they were admitted
		landed   []bool   // flights[i] is done
	)
	learning = append(learning, b.Stats().Learning)
	record := func() { // after every operation
		l, bu := b.Limit(), b.Burst()
		if last := regimes[len(regimes)-1]; last.limit != l || last.burst != bu {
			regimes = append(regimes, regime{since(), l, bu})
		}
	}
	for ops := 0; !p.done() && ops < 1000; ops++ {
		op := p.next() % opCount
		time.Sleep(time.Duration(p.next()) * 10 * time.Millisecond)
		synctest.Wait() // waiters woken by now have recorded their grant
		switch op {
		case opAllow, opAllowN:
			n := 1
			if op == opAllowN {
				n = int(p.next() % 6)
			}
			queued := b.Stats().Queued
			if b.AllowN(n) && n > 0 {
				if queued > 0 {
					t.Fatalf("op %d: AllowN(%d) succeeded with %d callers waiting", ops, n, queued)
				}
				mu.Lock()
				grants = append(grants, grant{since(), n, stretch})
				mu.Unlock()
			}
		case opWait:
			nb := p.next()
			n := 1 + int(nb%5)
			flight := nb/15%2 == 1
			prio := []Priority{PriorityNormal, PriorityLow, PriorityHigh}[nb/5%3]
			deadline, cancelAfter := time.Duration(p.next())*50*time.Millisecond, time.Duration(p.next())*50*time.Millisecond
			ctx, cancel := context.WithCancel(WithPriority(context.Background(), prio))
			if deadline > 0 {
				ctx, cancel = context.WithTimeout(WithPriority(context.Background(), prio), deadline)
			}
			id, joinedAt := joined, since()
			joined++
			wg.Go(func() {
				defer cancel()
				if cancelAfter > 0 {
					stop := time.AfterFunc(cancelAfter, cancel)
					defer stop.Stop()
				}
				var f Flight
				var err error
				if flight {
					f, err = b.BeginN(ctx, n)
				} else {
					err = b.WaitN(ctx, n)
				}
				at := since()
				mu.Lock()
				defer mu.Unlock()
				returned++
				if flight && err == nil {
					flights, landed = append(flights, f), append(landed, false)
				}
				switch {
				case err == nil:
					if deadline > 0 && at > joinedAt+deadline {
						t.Errorf("waiter %d: granted at %v, after its deadline %v", id, at, joinedAt+deadline)
					}
					if c.MaxWait > 0 && at > joinedAt+c.MaxWait {
						t.Errorf("waiter %d: granted at %v, beyond MaxWait after it joined at %v", id, at, joinedAt)
					}
					grants = append(grants, grant{at, n, stretch})
					served = append(served, servedWaiter{id, joinedAt, at, prio})
				case errors.Is(err, ErrQueueFull), errors.Is(err, ErrWaitTooLong), errors.Is(err, ErrExceedsBurst),
					errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
				default:
					t.Errorf("waiter %d: WaitN(%d) = %v, not a documented error", id, n, err)
				}
			})
			synctest.Wait() // queued, or done, before the next operation
		case opSetLimit:
			b.SetLimit(fuzzLimits[int(p.next())%len(fuzzLimits)])
		case opSetBurst:
			b.SetBurst(int(p.next() % 8))
		case opObserve:
			status := fuzzStatuses[int(p.next())%len(fuzzStatuses)]
			q := Quota{Limit: -1, Remaining: -1}
			if v := p.next(); v != 0xff {
				q.Limit = float64(v)
			}
			if v := p.next(); v != 0xff {
				q.Remaining = float64(min(v, byte(max(q.Limit, 0))))
			}
			if v := p.next(); v != 0 {
				q.Reset = time.Now().Add(time.Duration(v) * 500 * time.Millisecond)
			}
			q.RetryAfter = time.Duration(p.next()%64) * 500 * time.Millisecond
			q.Window = time.Duration(p.next()) * time.Second
			mu.Lock()
			stretch++ // the answer may open a new window
			mu.Unlock()
			b.ObserveQuota(status, q)
			learning = append(learning, b.Stats().Learning)
		case opDone:
			i, status := int(p.next()), fuzzStatuses[int(p.next())%len(fuzzStatuses)]
			limit, left, reset := p.next(), p.next(), p.next()
			mu.Lock()
			if len(flights) == 0 {
				mu.Unlock()
				break
			}
			i %= len(flights)
			f := flights[i]
			landed[i] = true
			stretch++ // the answer may open a new window
			mu.Unlock()
			if limit == 0xff {
				f.Done(nil)
			} else {
				f.DoneQuota(status, Quota{Limit: float64(limit), Remaining: float64(min(left, limit)), Reset: time.Now().Add(time.Duration(reset) * 100 * time.Millisecond)})
			}
			learning = append(learning, b.Stats().Learning)
		}
		synctest.Wait()
		record()
		mu.Lock()
		flying := 0
		for _, l := range landed {
			if !l {
				flying++
			}
		}
		mu.Unlock()
		if got := b.Stats().InFlight; got != flying {
			t.Fatalf("op %d: %d in flight, want %d", ops, got, flying)
		}
		b.mu.Lock()
		if !slices.IsSorted(b.flying) || len(b.flying) != flying {
			t.Fatalf("op %d: flying %v, want %d in order", ops, b.flying, flying)
		}
		b.mu.Unlock()
	}
	// Every waiter returns: a bubble whose goroutines all block forever
	// fails synctest.Test. A waiter behind an in-flight limit waits for a
	// flight to end, as its caller would end them: all of them, and those
	// admitted meanwhile, for up to an hour.
	for waited := time.Duration(0); ; waited += time.Second {
		synctest.Wait()
		mu.Lock()
		var open []Flight
		for i, l := range landed {
			if !l {
				open, landed[i] = append(open, flights[i]), true
			}
		}
		all := returned == joined
		mu.Unlock()
		if len(open) == 0 && all {
			break
		}
		if waited > time.Hour {
			t.Fatalf("%d waiters still waiting after an hour with no flight left", joined-returned)
		}
		for _, f := range open {
			mu.Lock()
			stretch++ // an answer, if no response: another may probe
			mu.Unlock()
			f.Done(nil)
			learning = append(learning, b.Stats().Learning)
			synctest.Wait() // who it let go has recorded its grant
		}
		time.Sleep(time.Second)
	}
	wg.Wait()
	if returned != joined {
		t.Fatalf("%d waiters joined, %d returned", joined, returned)
	}

	// Waiters are served in order of priority with aging.
	aging := cmp.Or(c.Aging, DefaultAging)
	key := func(w servedWaiter) time.Duration { return w.joined - time.Duration(w.p.level())*aging }
	slices.SortFunc(served, func(a, b servedWaiter) int { return cmp.Or(cmp.Compare(key(a), key(b)), a.id-b.id) })
	for i, v := range served {
		for _, w := range served[i+1:] {
			if w.at < v.at && v.joined < w.at {
				t.Fatalf("waiter %d (%v, joined %v) served at %v, before waiter %d (%v, joined %v), ahead of it, at %v",
					w.id, w.p, w.joined, w.at, v.id, v.p, v.joined, v.at)
			}
		}
	}
	// The token-bucket bound, within each stretch between answers.
	slices.SortStableFunc(grants, func(a, b grant) int {
		if a.stretch != b.stretch {
			return a.stretch - b.stretch
		}
		return int(a.at - b.at)
	})
	// inForce returns the largest rate and burst in force during [from, to].
	inForce := func(from, to time.Duration) (float64, float64) {
		l, bu := 0.0, 0.0
		for i, r := range regimes {
			end := time.Duration(math.MaxInt64)
			if i+1 < len(regimes) {
				end = regimes[i+1].from
			}
			if r.from <= to && end >= from {
				l, bu = max(l, float64(r.limit)), max(bu, float64(r.burst))
			}
		}
		return l, bu
	}
	for i := range grants {
		if learning[grants[i].stretch] {
			// One at a time: the next only once the probe is given up for
			// lost, a few latencies on and at least minProbeWait.
			if i > 0 && grants[i-1].stretch == grants[i].stretch && float64(grants[i].at-grants[i-1].at) < minProbeWait {
				t.Fatalf("learning its limit, the bucket granted calls at %v and %v, before an answer and before the probe was given up", grants[i-1].at, grants[i].at)
			}
			continue
		}
		sum := 0
		for j := i; j < len(grants) && grants[j].stretch == grants[i].stretch; j++ {
			sum += grants[j].n
			from, to := grants[i].at, grants[j].at
			l, bu := inForce(from, to)
			if l == float64(rate.Inf) {
				continue
			}
			if bound := bu + l*(to-from).Seconds() + 1e-6; float64(sum) > bound {
				t.Fatalf("%d tokens granted in [%v, %v], more than burst %v + rate %v × %v", sum, from, to, bu, l, to-from)
			}
		}
	}
}
