package throttle

import (
	"cmp"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// A Bucket admits requests at a steady rate with bursts, the way a token bucket
// does: it holds up to Burst tokens, refilled at Limit tokens per second, and
// each request takes one (AllowN and WaitN take n). Tokens are fractional and
// are computed from the monotonic time elapsed since the last change; a bucket
// runs no timers or goroutines of its own while nobody waits.
//
// Callers that cannot be admitted at once either give up ([Bucket.Allow]) or
// queue ([Bucket.Wait]): the queue serves higher priorities first
// ([WithPriority], aged by [Config.Aging]) and each priority first-in
// first-out; it is bounded by [Config.MaxQueue] and [Config.MaxWait], and
// Allow never overtakes it. The waiting caller's own goroutine sleeps;
// cancelling its context removes it and lets the callers behind it move up
// at once.
//
// The server's view overrides the local estimate: [Bucket.Observe] folds each
// response's rate-limit headers into the bucket, lowering its tokens, learning
// its rate, and imposing a cooldown on every caller after a 429.
//
// A Bucket is safe for concurrent use. Create one with [NewBucket]; the zero
// value is not usable.
type Bucket struct {
	// fast is the lock-free state read and updated by Allow when nobody
	// waits: the theoretical arrival time (GCRA), the instant at which the
	// bucket would be full again, as the bits of its int64. When the mutex
	// owns the state, fast holds slowPath (never, an instant no tat takes)
	// and the state is in tat.
	//
	// It pays (BenchmarkAllow, BenchmarkAllowParallel, medians of 6 here):
	// 41 ns an Allow, 39 ns with two goroutines, against 77 and 59 ns when
	// every Allow takes the mutex path (x/time/rate: 98–117 and 105 ns). A
	// bare GCRA under a mutex (impl=mutexGCRA) is as fast as this path: what
	// it saves is the queue, cooldown and cap checks that nothing needs
	// while nobody waits, not the lock.
	fast atomic.Uint64
	// interval (nanoseconds per token, 0 for no limit) and tau (interval ×
	// burst) as float64 bits, read by the lock-free path. They are only changed
	// while fast holds slowPath, so a lock-free update whose inputs went stale
	// fails its compare-and-swap.
	interval atomic.Uint64
	tau      atomic.Uint64
	// admitted counts the tokens admitted, by either path: the sequence
	// number of the latest admission, which the server model relates the
	// server's counts to. extra is the tokens beyond one per call, so that
	// Stats can count calls.
	admitted, extra atomic.Uint64
	// inflight counts the requests begun with Begin and not yet Done (the
	// length of flying, which mu guards); atomic, so that the lock-free
	// path can tell whether an in-flight limit is reached.
	inflight atomic.Int64
	// flightCap is the in-flight limit (see inflight.go); 0: none.
	flightCap atomic.Int64

	epoch time.Time // the origin of the bucket's clock; monotonic

	// The lock rule. mu guards the fields below. A method whose name ends
	// in Locked requires mu held; one that reads or changes the tokens or
	// the rate also requires the state owned: taken from the lock-free path
	// by ownLocked (or ownAtLocked) and handed back by releaseLocked, which
	// its comment says. Every other method takes mu itself, if it needs it,
	// and must not be called with it held.
	mu sync.Mutex

	tat      instant    // theoretical arrival time while fast == slowPath
	clock    instant    // the latest time the mutex has seen; see ownAtLocked
	limit    rate.Limit // current rate; rate.Inf: none
	burst    int
	auto     bool       // burst follows limit (Config.Burst was zero)
	autoCap  int        // with auto, the burst the server model asks for; 0: one second's worth
	minCost  int        // with auto, the largest cost asked: the burst holds it (see fitsLocked)
	ceiling  rate.Limit // Config.Limit; 0 when learned
	maxQueue int        // < 0: never queue
	maxWait  float64    // nanoseconds; +Inf: none
	// cfgFlights is Config.MaxInFlight, srvFlights the server's
	// concurrency quota, modelFlights the server model's (plan.flights);
	// 0: none. flightCap is the least of them.
	cfgFlights, srvFlights, modelFlights int64
	hold                                 instant // nothing is admitted before this instant (cooldown); the zero instant, past: none
	holdFrom                             instant // when the current hold began; holds are capped from there
	probe                                bool    // a hold ended: the first admission after it goes alone
	q                                    queue
	timer                                *time.Timer // wakes the queue's head; created on first use

	// learning: one request at a time goes out (probing counts it) and the
	// rest wait for its answer: at a cold start, after a hold, after a cap's
	// end.
	learning  bool
	probing   int
	probeSent instant // when the latest probe went out
	// The server model's cap (see plan): while capOn, before capEnd, no
	// admission beyond sequence number capBase + capGrow·(t − capAt).
	capOn                    bool
	capAt, capEnd            instant
	capBase, capGrow, capRef float64
	maxCooldown              float64 // nanoseconds
	flying                   flying  // the sequence numbers in flight; see inflight.go

	model  model // what the server has said; see model.go
	shared       // the state of a bucket kept in a Store; see shared.go

	// kick, when not nil, is poked whenever the bucket changes under its
	// queue (replanLocked): the gate of a Transport with Meters, whose
	// head waits on the bucket without queuing in it. Set before the bucket
	// is shared.
	kick chan struct{}

	name     string
	onEvent  func(Event)
	trace    *tracer // Config.Trace; nil: none
	logger   *slog.Logger
	slowWait float64
	pending  []Event // events to emit once the lock is released
	stats    counters
}

// maxTau bounds the tau of a bucket whose state the lock-free path may hold,
// so that its instant arithmetic cannot overflow: about 36 years. A bucket
// whose burst takes longer to refill keeps to the mutex, which decides the
// same.
const maxTau = horizon / 4

// slowPath in Bucket.fast says that the mutex owns the state: the bits of
// never, which no admission reaches (tau, the furthest a tat may run ahead,
// is finite).
const slowPath = uint64(never)

// NewBucket returns a bucket configured by c. A bucket with an explicit
// Burst starts full: it admits Burst requests at once. One told its Limit
// with the default burst starts with a single token and fills at Limit, so
// that its first window never holds more than the server's quota. Invalid
// fields of c are replaced as documented on [Config]; use [Config.Validate]
// to reject them instead.
func NewBucket(c Config) *Bucket { return newBucket(c, time.Now(), 0) }

// newBucket is NewBucket with the origin of the bucket's clock and the time
// on it: a Transport's buckets share its clock, so that one reading serves
// the lookup of a request's bucket and its admission (a bucket made after
// that reading must already be full at it).
func newBucket(c Config, epoch time.Time, now instant) *Bucket {
	b := &Bucket{epoch: epoch, maxQueue: c.MaxQueue, maxWait: math.Inf(1)}
	b.q.init(c.Aging)
	if b.maxQueue == 0 {
		b.maxQueue = DefaultMaxQueue
	}
	switch {
	case c.MaxWait == 0:
		b.maxWait = float64(DefaultMaxWait)
	case c.MaxWait > 0:
		b.maxWait = float64(c.MaxWait)
	}
	limit := normLimit(c.Limit)
	b.ceiling = limit
	b.name, b.onEvent, b.logger, b.trace = c.Name, c.OnEvent, c.Logger, newTracer(c.Trace)
	if b.store = c.Store; b.store != nil {
		b.key = cmp.Or(c.Name, "default")
		b.share = DefaultStoreShare
		if c.StoreShare > 0 && c.StoreShare <= 1 {
			b.share = c.StoreShare
		}
	}
	b.slowWait = float64(time.Second)
	if c.SlowWait > 0 {
		b.slowWait = float64(c.SlowWait)
	}
	b.cfgFlights = int64(max(c.MaxInFlight, 0))
	b.flightCap.Store(b.cfgFlights)
	b.maxCooldown = float64(DefaultMaxCooldown)
	if c.MaxCooldown > 0 {
		b.maxCooldown = float64(c.MaxCooldown)
	}
	ceiling := float64(limit)
	if limit == rate.Inf {
		// No local limit: the model's +Inf, not a rate told. (As
		// math.MaxFloat64 it read as told, and the window that rate
		// gives a limit of 1, 5.6e-300 ns, made the tokens NaN:
		// FuzzNeverStuck's d8e26fa1c9bbf384.)
		ceiling = math.Inf(1)
	}
	b.model = newModel(b.maxCooldown, c.Pace, ceiling)
	b.model.pooled = c.Store != nil
	// The jitter differs between processes (the creation time) and
	// between the buckets of one Transport (the name); in a synctest
	// bubble, whose clock starts at a fixed instant, it repeats.
	seed := uint64(0x7468726f74746c65)
	for i := range len(c.Name) {
		seed = (seed ^ uint64(c.Name[i])) * 0x100000001b3 // FNV-1a
	}
	b.model.jitter.Seed(uint64(epoch.UnixNano()), seed)
	if limit == 0 {
		limit = rate.Inf // until the server's answer says otherwise
		b.learning = true
	}
	b.limit = limit
	b.burst = max(c.Burst, 0)
	b.auto = b.burst == 0
	b.tat = now // full
	b.applyParamsLocked()
	if b.auto && limit != rate.Inf {
		// Told the rate, with the default burst: start with one token,
		// not a full burst, so that the first window of a server whose
		// quota is that rate never holds more than its quota.
		b.setTokensLocked(b.tat, 1)
	}
	b.fast.Store(slowPath)
	b.releaseLocked(b.tat)
	return b
}

// defaultBurst is one second's worth of limit, at least 1.
func defaultBurst(limit rate.Limit) int {
	if limit == rate.Inf || limit >= math.MaxInt32 {
		return math.MaxInt32
	}
	return max(1, int(math.Ceil(float64(limit))))
}

// now returns the bucket's clock: nanoseconds since epoch, monotonic.
func (b *Bucket) now() instant { return sinceEpoch(time.Since(b.epoch)) }

// at converts a time to an instant on the bucket's clock.
func (b *Bucket) at(t time.Time) instant { return sinceEpoch(t.Sub(b.epoch)) }

// wall converts an instant on the bucket's clock to a time.
func (b *Bucket) wall(t instant) time.Time { return b.epoch.Add(time.Duration(t)) }

// Allow reports whether a request may happen now, and takes a token if so.
// Allow is shorthand for AllowN(1).
func (b *Bucket) Allow() bool { return b.AllowN(1) }

// AllowN reports whether n requests may happen now, and takes n tokens if so.
// It never takes tokens while callers are queued in Wait, nor during a
// cooldown. AllowN(0) reports true; a negative n reports false.
func (b *Bucket) AllowN(n int) bool {
	ok, _ := b.allowAt(n, b.now())
	return ok
}

// allowAt is AllowN at now, a reading of the bucket's clock. It also returns
// the time the decision was made at: now, or later if the mutex had seen a
// later time.
func (b *Bucket) allowAt(n int, now instant) (bool, instant) {
	if n <= 0 {
		return n == 0, now
	}
	for {
		w := b.fast.Load()
		if w == slowPath {
			if b.store != nil {
				return b.allowShared(n), now
			}
			return b.allowSlow(n, now)
		}
		iv := math.Float64frombits(b.interval.Load())
		if iv == 0 {
			b.countAdmission(n)
			return true, now
		}
		// The tat advances by whole nanoseconds, rounded up (see
		// takeLocked); the nanosecond of slack allows for that rounding.
		// Plain arithmetic, not sub and add (BenchmarkAllow: add is not
		// inlined): both instants are finite, fast never holding never,
		// and d is at most tau + 1, below maxTau (see releaseLocked).
		tat, d := max(instant(w), now), float64(n)*iv
		if float64(tat-now)+d > math.Float64frombits(b.tau.Load())+1 {
			return false, now
		}
		if b.fast.CompareAndSwap(w, uint64(tat+instant(math.Ceil(d)))) {
			b.countAdmission(n)
			return true, now
		}
	}
}

func (b *Bucket) allowSlow(n int, now instant) (bool, instant) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now = b.ownAtLocked(now)
	defer b.releaseLocked(now)
	if b.q.len > 0 || now < b.hold {
		return false, now
	}
	return b.takeLocked(now, n) != 0, now
}

// ownLocked makes the mutex the owner of the state and returns the time. Every
// ownLocked is paired with a releaseLocked.
func (b *Bucket) ownLocked() instant { return b.ownAtLocked(b.now()) }

// ownAtLocked is ownLocked with a reading of the clock taken before b.mu
// was acquired.
// Another caller may have taken a later reading and the lock first: the
// time the state sees never goes back.
func (b *Bucket) ownAtLocked(now instant) instant {
	// Only lock-free admissions change fast, and only from a value other
	// than slowPath: if it holds slowPath, the mutex owns the state already
	// and the swap (a locked instruction) is not needed.
	if b.fast.Load() != slowPath {
		if w := b.fast.Swap(slowPath); w != slowPath {
			b.tat = instant(w)
		}
	}
	now = max(now, b.clock)
	b.clock = now
	b.endLocked(now)
	return now
}

// endLocked ends the hold or the cap whose end has come: after a cooldown,
// and when the window a cap was for has ended, one request goes first, its
// answer telling whether the server is ready for more, and how much. With a
// Store and a rate, the store meters the first requests instead: it does
// not refill while held, and each process's probe, taken here, would go at
// the same instant as the others' (four processes on httprate's counter:
// three probes at once at a window's turn, three 429s, and 3 s held).
// Without a rate the store admits all but a hold: the probe stays.
func (b *Bucket) endLocked(now instant) {
	if b.probe && now >= b.hold || b.capOn && now >= b.capEnd {
		b.probe, b.capOn = false, false
		b.learning, b.probing = b.store == nil || b.limit == rate.Inf, 0
	}
}

// releaseLocked hands the state back to the lock-free path when nothing needs
// the mutex's judgement: nobody queued, no cooldown, no cap from the server, no
// store, and a burst that refills within maxTau.
func (b *Bucket) releaseLocked(now instant) {
	if b.q.len == 0 && now >= b.hold && !b.learning && !b.capOn && b.store == nil && math.Float64frombits(b.tau.Load()) < maxTau {
		b.fast.Store(uint64(b.tat))
	}
}

// applyParamsLocked publishes limit and burst to the lock-free path. It
// requires the state owned, or that b is not yet shared.
func (b *Bucket) applyParamsLocked() {
	if b.auto {
		b.burst = defaultBurst(b.limit)
		if b.autoCap > 0 {
			b.burst = b.autoCap
		}
		if c := float64(b.minCost); c > float64(b.burst) {
			// The largest cost asked, within what could ever be admitted.
			b.burst = int(min(c, max(b.mostCostLocked(), float64(b.burst))))
		}
	}
	iv := b.iv()
	b.interval.Store(math.Float64bits(iv))
	b.tau.Store(math.Float64bits(iv * float64(b.burst)))
}

// iv is the interval between tokens in nanoseconds, 0 for no limit.
func (b *Bucket) iv() float64 {
	if b.limit == rate.Inf {
		return 0
	}
	if b.limit <= 0 {
		return math.Inf(1)
	}
	// A finite interval keeps every comparison meaningful: a rate so slow
	// that a token takes longer than maxInterval is treated as that slow.
	// One so fast that a token takes less than the clock's nanosecond is
	// treated as a token a nanosecond: a tat that advances by whole
	// nanoseconds would otherwise count a nanosecond as many tokens.
	return min(max(float64(time.Second)/float64(b.limit), minInterval), maxInterval)
}

// The bounds of the interval between tokens: a nanosecond (a billion
// tokens a second), and about 11.6 days.
const (
	minInterval = 1
	maxInterval = 1e15
)

// normLimit maps a rate to what the bucket keeps: rate.Inf for any infinite
// or huge rate, 0 (not known) for zero, negative and NaN rates.
func normLimit(l rate.Limit) rate.Limit {
	switch {
	case math.IsNaN(float64(l)) || l <= 0:
		return 0
	case l >= rate.Inf:
		return rate.Inf
	}
	return l
}

// dur converts nanoseconds to a Duration, clamped to [0, maxDur] so that no
// conversion overflows.
func dur(ns float64) time.Duration {
	return time.Duration(min(max(ns, 0), maxDur))
}

// maxDur is the longest wait the bucket computes with: about 146 years.
const maxDur = float64(1 << 62)

// tokensAtLocked returns the tokens at now, which may be negative after a
// correction. It requires the state owned.
func (b *Bucket) tokensAtLocked(now instant) float64 {
	iv := b.iv()
	if iv == 0 {
		return float64(b.burst)
	}
	if math.IsInf(iv, 1) {
		return 0
	}
	return min(float64(b.burst), float64(b.burst)-b.tat.sub(now)/iv)
}

// setTokensLocked sets the tokens at now. It requires the state owned.
func (b *Bucket) setTokensLocked(now instant, tokens float64) {
	iv := b.iv()
	if iv == 0 || math.IsInf(iv, 1) {
		b.tat = now
		return
	}
	b.tat = now.add((float64(b.burst) - tokens) * iv)
}

// takeLocked takes n tokens at now if they are there and returns the sequence
// number of the admission, 0 if it was refused. It requires the state owned.
func (b *Bucket) takeLocked(now instant, n int) uint64 {
	if b.learning && b.probing > 0 && now < b.probeLostLocked() {
		return 0 // one request at a time goes out to learn the quota
	}
	if b.cappedLocked(now, n) {
		return 0
	}
	iv := b.iv()
	if iv != 0 {
		if b.readyAtLocked(now, n) > now+1 { // 1ns of slack absorbs the tat's rounding
			return 0
		}
		// Rounded up to the nanosecond, so that no rate, however high,
		// admits more than its interval allows; at most one nanosecond
		// late per admission, and the slack above gives it back.
		b.tat = max(b.tat, now).add(math.Ceil(float64(n) * iv))
	}
	if b.learning {
		b.probing++
		b.probeSent = now
	}
	return b.countAdmission(n)
}

// probeLostLocked returns when the probe in flight is given up for lost, so
// that another goes: a few of the server's latencies after it was sent. Before
// the first answer nothing is given up: the callers wait for it, bounded by
// their MaxWait.
func (b *Bucket) probeLostLocked() instant {
	if !b.model.answered {
		return never
	}
	return b.probeSent.add(min(max(4*b.model.latency, minProbeWait), maxProbeWait))
}

// The bounds of how long a probe's answer is waited for.
const (
	minProbeWait = float64(100 * time.Millisecond)
	maxProbeWait = float64(2 * time.Second)
)

// countAdmission counts an admission of n tokens and returns its sequence
// number: the number of the last of its tokens.
func (b *Bucket) countAdmission(n int) uint64 {
	if n > 1 {
		b.extra.Add(uint64(n - 1))
	}
	return b.admitted.Add(uint64(n))
}

// readyAtLocked returns when the bucket will hold n tokens beyond those it
// holds now, ignoring the cooldown: never if never. It requires the state
// owned.
func (b *Bucket) readyAtLocked(now instant, n int) instant {
	iv := b.iv()
	switch {
	case iv == 0:
		return now
	case math.IsInf(iv, 1):
		return never
	}
	return max(b.tat, now).add(float64(n)*iv - iv*float64(b.burst))
}

// count returns the tokens admitted since the bucket was made: the sequence
// number of the latest admission.
func (b *Bucket) count() uint64 { return b.admitted.Load() }

// Tokens returns the number of tokens the bucket holds now: the least of
// its own count and of what the server said it may still send before its
// window ends. It is fractional, and negative when the server has said that
// more requests were spent than the bucket knew of. With no limit and no
// word from the server it returns the burst.
func (b *Bucket) Tokens() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.ownLocked()
	defer b.releaseLocked(now)
	return b.tokensNowLocked(now)
}

// tokensNowLocked is Tokens at now. It requires the state owned.
func (b *Bucket) tokensNowLocked(now instant) float64 {
	t := b.tokensAtLocked(now)
	if b.capOn && now < b.capEnd {
		t = min(t, b.capLeftLocked(now))
	}
	if b.learning && b.model.answered {
		// Probing: one request goes, and the rest wait for its answer.
		t = min(t, float64(1-min(b.probing, 1)))
	}
	return t
}

// Limit returns the bucket's current rate in tokens per second, [rate.Inf]
// when it has none.
func (b *Bucket) Limit() rate.Limit {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit
}

// Burst returns the bucket's current capacity.
func (b *Bucket) Burst() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.burst
}

// SetLimit makes limit tokens per second the bucket's ceiling, as if it had
// been Config.Limit, until the next SetLimit: the rate is limit, or the pace
// the server's answers set if that is slower, and later answers may lower
// it but never raise it above limit. It replaces the configured Limit, so it
// may raise the ceiling as well as lower it. [rate.Inf] removes the local
// limit, leaving the server's pace. Zero, negative and NaN limits are
// ignored. The tokens the bucket holds are kept; a finite rate after none
// starts from a full bucket.
//
// Callers queued in Wait are re-planned at the new rate: those whose wait now
// exceeds their MaxWait or deadline fail with [ErrWaitTooLong] at once, the
// others are woken at their new time.
func (b *Bucket) SetLimit(limit rate.Limit) {
	if limit = normLimit(limit); limit == 0 {
		return
	}
	defer b.emit()
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.ownLocked()
	b.ceiling = limit
	if pace := rate.Limit(b.model.plan.rate); pace > 0 {
		limit = min(limit, pace) // as the next answer would set it
	}
	b.setParamsLocked(now, limit, b.burst)
	b.replanLocked(now)
	b.releaseLocked(now)
}

// SetBurst changes the capacity, keeping the tokens the bucket holds now (at
// most the new burst). Zero means the default for the current limit; negative
// values are ignored. Queued callers are re-planned as for SetLimit; those
// asking for more than the new burst fail with [ErrExceedsBurst].
func (b *Bucket) SetBurst(burst int) {
	if burst < 0 {
		return
	}
	defer b.emit()
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.ownLocked()
	b.auto = burst == 0
	b.setParamsLocked(now, b.limit, burst)
	b.replanLocked(now)
	b.releaseLocked(now)
}

// setParamsLocked changes limit and burst, keeping the tokens. It requires the
// state owned.
func (b *Bucket) setParamsLocked(now instant, limit rate.Limit, burst int) {
	tokens := b.tokensAtLocked(now)
	if b.limit == rate.Inf {
		tokens = math.Inf(1) // a finite limit starts full
	}
	if old := b.limit; limit != old && (old == rate.Inf || limit == rate.Inf || math.Abs(float64(limit-old)) > 0.1*float64(old)) {
		b.noteLocked(Event{Kind: EventLimit, Limit: limit})
	}
	b.limit, b.burst = limit, burst
	b.applyParamsLocked()
	b.setTokensLocked(now, min(tokens, float64(b.burst)))
}
