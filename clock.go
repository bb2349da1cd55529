package throttle

import (
	"math"
	"time"
)

// An instant is a reading of a bucket's clock: nanoseconds since
// Bucket.epoch, monotonic. Every point in time the gate and the server model
// compute with is one; durations, rates and token counts stay float64, as
// the model's arithmetic is.
//
// It is an int64 so that one nanosecond stays representable: float64
// nanoseconds lose it after 2⁵³ ns, about 104 days of uptime, and with it
// the nanosecond of slack that lets a timer firing at the planned instant
// serve its waiter. Instants other than never lie within horizon of the
// epoch, so that no difference of two of them overflows.
//
// No instant value means "not known". Where an instant may be unset (a
// cap that may not be in force, a reset the server may not have stated), a
// bool beside it says whether it is (Bucket.capOn, plan.holdOn,
// observation.resetOK, answer.ok). never is a real instant, the end of what
// has none. The zero instant is the epoch, which no reading of the clock
// precedes: a hold, a cut or a sweep at zero is simply in the past.
type instant int64

// never is the instant after every other: the end of a wait or a cap that
// has none. add keeps it, sub reads it as +Inf.
const never = instant(math.MaxInt64)

// horizon bounds the other instants: about 146 years either side of the
// epoch, so that no difference of two of them overflows. Conversions and
// add clamp to it; only +Inf (and NaN) become never. (So a bucket forgets
// a debt of tokens beyond it: one that takes more than 146 years to repay.)
const horizon = 1<<62 - 1

// toInstant returns the instant d nanoseconds after the epoch, rounded to
// the nanosecond.
func toInstant(d float64) instant {
	switch {
	case math.IsInf(d, 1) || math.IsNaN(d):
		return never
	case d >= horizon:
		return horizon
	case d <= -horizon:
		return -horizon
	}
	return instant(math.Round(d))
}

// sinceEpoch returns the instant of a duration since the epoch.
func sinceEpoch(d time.Duration) instant {
	return instant(min(max(d, -horizon), horizon))
}

// add returns the instant d nanoseconds after t (before, if d < 0), rounded
// to the nanosecond. never stays never.
func (t instant) add(d float64) instant {
	if t == never {
		return never
	}
	if s := float64(t) + d; !(s < horizon && s > -horizon) {
		return toInstant(s)
	}
	return min(max(t+instant(math.Round(d)), -horizon), horizon)
}

// sub returns t − u in nanoseconds, exact below 2⁵³ ns (104 days): +Inf
// when t is never, −Inf when only u is.
func (t instant) sub(u instant) float64 {
	switch {
	case t == never:
		return math.Inf(1)
	case u == never:
		return math.Inf(-1)
	}
	return float64(t - u)
}
