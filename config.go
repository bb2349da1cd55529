package throttle

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"golang.org/x/time/rate"
)

// Defaults applied by [NewBucket] to the zero fields of a [Config].
const (
	// DefaultMaxQueue is the number of waiters a bucket queues when
	// Config.MaxQueue is zero.
	DefaultMaxQueue = 1000
	// DefaultMaxWait is the longest a caller waits when Config.MaxWait is zero.
	DefaultMaxWait = time.Minute
	// DefaultMaxCooldown caps server-requested waits when Config.MaxCooldown
	// is zero.
	DefaultMaxCooldown = 10 * time.Minute
)

// Config describes a [Bucket]. Every zero field has a useful meaning.
type Config struct {
	// Limit is the steady rate in tokens (requests) per second.
	// Zero means not known: the bucket learns it from the server (see
	// [Bucket.Observe]); until it has, the bucket lets one request through and
	// holds the rest for its answer. [rate.Inf] means no local limit: only the
	// server's cooldowns hold callers back. When set, Limit is a ceiling that
	// the server's headers may lower but never raise; [Bucket.SetLimit]
	// replaces it. Against a server whose answers state no quota, the
	// bucket paces 1% under it once 8 answers have come at it: sent to at
	// exactly its steady rate, a window refuses at its edge. Negative and
	// NaN values are invalid; [NewBucket] treats them as zero.
	Limit rate.Limit

	// Burst is the bucket's capacity: the most tokens it holds, and so the most
	// requests it admits at once. Zero means a default that follows the
	// server model: one second's worth of the current rate, rounded up and at
	// least 1, and 2 while the bucket paces at a server's steady rate (a
	// server not yet shown to be a fixed window, a refilling one, one that
	// states no quota); PaceBurst makes it the server's limit per window.
	// A bucket told its Limit whose server is shown to be a token bucket
	// (GCRA and the like) also admits at once the idle tokens the server
	// reports beyond a small reserve: the burst the server grants on top of
	// the steady rate. The default grows to hold the largest cost asked
	// (WaitN, BeginN, a Transport's cost in tokens), up to the most that
	// could ever be admitted: the server's limit per window when that is
	// known, else what the rate brings within MaxWait or MaxCooldown,
	// whichever is shorter. A cost above that, or above an explicit Burst,
	// fails with [ErrExceedsBurst]. Set Burst to bound it. Negative values
	// are invalid, and treated as zero.
	Burst int

	// MaxQueue is how many callers may wait for tokens at once. Zero means
	// [DefaultMaxQueue]; negative means that callers never wait: WaitN fails
	// with [ErrQueueFull] whenever the tokens are not there at once.
	MaxQueue int

	// MaxWait is the longest a caller may wait for tokens. A caller whose
	// predicted wait is longer is refused at once with [ErrWaitTooLong]. Zero
	// means [DefaultMaxWait]; negative means no limit beyond the context's.
	MaxWait time.Duration

	// MaxInFlight is the most requests of the bucket in flight at once:
	// begun by [Bucket.Begin] (or a [Transport]) and not yet Done, those of
	// cost 0 included. A request beyond it queues, first-in first-out with
	// those waiting for tokens, until one in flight is answered; it takes
	// its tokens only then, and is refused at its deadline (MaxWait, the
	// context's) if none is. A server that states a concurrency quota (the
	// IETF quota unit "concurrent-requests") lowers it, never raises it.
	// Zero means no limit beyond the server's; negative values are invalid,
	// and treated as zero. Wait and Allow, whose requests the bucket does
	// not see end, are not counted; a Wait queued behind a flight that
	// waits for one to end waits with it, first in, first out.
	MaxInFlight int

	// Aging is how long a waiter waits to rise one [Priority] level: a
	// waiter is served as if it had arrived Aging earlier per level its
	// priority stands above PriorityLow, so it is never overtaken by a
	// caller arriving more than 2×Aging after it. Zero means
	// [DefaultAging]; negative means no aging: higher priorities always go
	// first, and a low one waits for as long as they keep coming, bounded
	// only by MaxWait.
	Aging time.Duration

	// Pace chooses how a bucket spends a quota that the server reports:
	// [PaceEven] (the zero value) spreads what is left over the time left,
	// [PaceBurst] lets callers spend it at once and then holds them until the
	// window resets. Other values are invalid; [NewBucket] treats them as
	// PaceEven.
	Pace Pace

	// Name identifies the bucket in events, logs and errors. [Transport]
	// sets it to the bucket's key.
	Name string

	// OnEvent, if not nil, is called with every [Event]: long waits,
	// refusals, cooldowns, changes of rate. It is called without the
	// bucket's lock held, and may call the bucket's methods; it is called
	// by whichever goroutine next leaves the bucket (a caller, or the
	// bucket's timer), so it must be safe for concurrent use.
	OnEvent func(Event)

	// Trace, if not nil, is told of each queued caller's wait and of each
	// answer, with the request's context: the hooks of telemetry (see
	// package otelthrottle).
	Trace *Trace

	// Logger, if not nil, receives the same events as OnEvent. A bucket logs
	// nothing by default.
	Logger *slog.Logger

	// SlowWait is the wait beyond which a caller's wait is reported as an
	// [EventWait]. Zero means one second; negative values are invalid, and
	// treated as zero.
	SlowWait time.Duration

	// Store, if not nil, keeps the bucket's tokens and cooldown in a store
	// shared by every process that uses the same store and Name (package
	// redisstore keeps them in Redis), so that replicas calling one API
	// with one key stay inside one quota. Each process keeps its own wait
	// queue and only the queue's head asks the store: one round trip per
	// admission, Allow included. Corrections and cooldowns learned from a
	// process's responses are sent to the store, so a 429 seen by one
	// process holds them all. When the store fails, the process limits
	// itself to StoreShare of the rate, reports [EventStoreDown], asks the
	// store again a second later, and reports [EventStoreUp] when it
	// answers.
	Store Store

	// StoreShare is the share of the rate and burst a process uses on its
	// own while its Store is unreachable: 1/N for N processes keeps them
	// within the quota together. Zero means [DefaultStoreShare]; other
	// values outside (0, 1] (and NaN) are invalid, and treated as zero.
	StoreShare float64

	// MaxCooldown caps every wait the server asks for (Retry-After, a reset
	// far ahead, backoff after repeated 429s), so that a hostile or broken
	// header never hangs a client. Zero means [DefaultMaxCooldown]; negative
	// values are invalid, and treated as zero.
	MaxCooldown time.Duration
}

// Validate reports the fields of c that are invalid, as documented on each
// field: one error per field, naming it and its value, joined by
// [errors.Join]; nil if every field is valid. [NewBucket] accepts any Config
// (it replaces invalid values as documented); call Validate to reject bad
// configuration instead.
func (c Config) Validate() error {
	var errs []error
	bad := func(field string, value any, want string) {
		errs = append(errs, fmt.Errorf("throttle: Config.%s = %v: %s", field, value, want))
	}
	if math.IsNaN(float64(c.Limit)) || c.Limit < 0 {
		bad("Limit", float64(c.Limit), "must be >= 0 (0: learn it from the server; rate.Inf: no local limit)")
	}
	if c.Burst < 0 {
		bad("Burst", c.Burst, "must be >= 0 (0: the default burst)")
	}
	if c.MaxInFlight < 0 {
		bad("MaxInFlight", c.MaxInFlight, "must be >= 0 (0: no limit)")
	}
	if c.Pace != PaceEven && c.Pace != PaceBurst {
		bad("Pace", int(c.Pace), "must be PaceEven or PaceBurst")
	}
	if c.SlowWait < 0 {
		bad("SlowWait", c.SlowWait, "must be >= 0 (0: one second)")
	}
	if math.IsNaN(c.StoreShare) || c.StoreShare < 0 || c.StoreShare > 1 {
		bad("StoreShare", c.StoreShare, "must be in (0, 1] (0: DefaultStoreShare)")
	}
	if c.MaxCooldown < 0 {
		bad("MaxCooldown", c.MaxCooldown, "must be >= 0 (0: DefaultMaxCooldown)")
	}
	return errors.Join(errs...)
}
