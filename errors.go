package throttle

import "errors"

// Errors returned when a bucket refuses a caller. They are returned wrapped,
// with the figures that led to the refusal; match them with [errors.Is].
var (
	// ErrQueueFull: the wait queue already holds Config.MaxQueue waiters
	// (or the bucket never queues, MaxQueue < 0) and the tokens are not there.
	ErrQueueFull = errors.New("throttle: queue full")
	// ErrWaitTooLong: the predicted wait exceeds Config.MaxWait or the context's
	// deadline (for a request, [Bucket.Begin], the deadline less the time an
	// answer takes, a moving mean and at least 5 ms). When the deadline is the
	// reason the error also matches [context.DeadlineExceeded].
	ErrWaitTooLong = errors.New("throttle: wait too long")
	// ErrExceedsBurst: WaitN asked for more tokens than the bucket can ever
	// hold, so no wait would satisfy it.
	ErrExceedsBurst = errors.New("throttle: n exceeds burst")
)
