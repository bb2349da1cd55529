package throttle

import (
	"context"
	"time"

	"golang.org/x/time/rate"
)

// A Trace is a set of hooks through which a bucket tells telemetry about the
// callers it holds back and the answers it observes, each with the context
// of the request concerned, in the spirit of net/http/httptrace: a tracer
// finds the request's span in the context, a meter records a histogram.
// Package otelthrottle wires them to OpenTelemetry. Set it as
// [Config.Trace]; a nil hook is not called, and a bucket without a Trace
// does no work for it.
//
// Hooks are called without the bucket's lock held, on the goroutine of the
// caller concerned (a waiter, or the one that observed an answer); they
// must be safe for concurrent use and should not block.
type Trace struct {
	// Waited is called when a caller that had to queue leaves the queue:
	// granted its tokens, refused because the bucket changed under it, or
	// gone because its context ended. ctx is the caller's. Callers
	// admitted at once, by Allow or by a Wait that finds its tokens, and
	// those refused at admission are not reported: they never waited
	// ([Bucket.Stats] counts them). A bucket with a [Config.Store] does not
	// report its waits.
	Waited func(ctx context.Context, w WaitInfo)

	// Answered is called after the bucket observed an answer. ctx is the
	// request's when the bucket knows it ([Transport], [Flight.Done] of a
	// [Bucket.Begin] given the request's context), else
	// context.Background().
	Answered func(ctx context.Context, a AnswerInfo)
}

// WaitInfo is what [Trace.Waited] reports about one wait in the queue.
type WaitInfo struct {
	Name      string        // Config.Name: the Transport's key
	N         int           // tokens asked for
	Reason    WaitReason    // what held the caller back when it queued
	Predicted time.Duration // the wait planned when the caller queued
	Waited    time.Duration // the wait it had
	Err       error         // nil: granted; else why it left without its tokens
}

// WaitReason says what held a queued caller back when it joined the queue.
type WaitReason uint8

const (
	// WaitRate: the bucket's tokens, at its rate, behind the callers ahead.
	WaitRate WaitReason = iota + 1
	// WaitQuota: the server's Remaining, spent until its window moves on.
	WaitQuota
	// WaitCooldown: a cooldown the server asked for (429, Retry-After).
	WaitCooldown
	// WaitLearning: the answer that teaches the bucket its quota (cold
	// start, or the probe after a cooldown).
	WaitLearning
)

func (r WaitReason) String() string {
	switch r {
	case WaitRate:
		return "rate"
	case WaitQuota:
		return "quota"
	case WaitCooldown:
		return "cooldown"
	case WaitLearning:
		return "learning"
	}
	return "unknown"
}

// AnswerInfo is what [Trace.Answered] reports about one answer.
type AnswerInfo struct {
	Name   string     // Config.Name: the Transport's key
	Status int        // the HTTP status; 0: no response came
	Quota  Quota      // what the answer said (-1 counts: not stated)
	Limit  rate.Limit // the bucket's rate once the answer was observed
	// Cooldown is how long the cooldown this answer started (or
	// extended) lasts from its arrival, capped by Config.MaxCooldown;
	// zero if it started none. Until is when it ends.
	Cooldown time.Duration
	Until    time.Time
}

// A tracer is a bucket's Trace and what it keeps for it: the plan told to
// each queued waiter, kept here rather than in the waiter so that a bucket
// without a Trace pays nothing for it. plans is guarded by Bucket.mu.
type tracer struct {
	Trace
	plans map[*waiter]waitPlan
}

// waitPlan is what a queued waiter is told at admission.
type waitPlan struct {
	predicted float64
	reason    WaitReason
}

func newTracer(t *Trace) *tracer {
	if t == nil || t.Waited == nil && t.Answered == nil {
		return nil
	}
	return &tracer{Trace: *t, plans: make(map[*waiter]waitPlan)}
}

// planWaitLocked records, for Trace.Waited, why w waits and for how long: until
// tokens are there, w's own and those of the waiters ahead of it. It
// requires the state owned and w queued.
func (b *Bucket) planWaitLocked(now instant, w *waiter, tokens int) {
	if b.trace == nil || b.trace.Waited == nil || b.store != nil {
		return // a Store's waits end in waitShared: not reported
	}
	p := waitPlan{predicted: max(b.plannedLocked(now, tokens).sub(now), 0), reason: WaitRate}
	switch {
	case now < b.hold:
		p.reason = WaitCooldown
	case b.learning:
		p.reason = WaitLearning
	case b.capFreeLocked(now, tokens) > b.readyAtLocked(now, tokens):
		p.reason = WaitQuota
	}
	b.trace.plans[w] = p
}

// waited reports w's wait, which ended with err, to Trace.Waited. It
// requires that b.mu is not held.
func (b *Bucket) waited(ctx context.Context, w *waiter, err error) {
	if b.trace == nil || b.trace.Waited == nil {
		return
	}
	b.mu.Lock()
	p, ok := b.trace.plans[w]
	delete(b.trace.plans, w)
	waited := w.waited // set when granted
	if w.err != nil || err != nil {
		waited = b.now().sub(w.since)
	}
	b.mu.Unlock()
	if !ok {
		return
	}
	b.trace.Waited(ctx, WaitInfo{
		Name: b.name, N: w.n, Reason: p.reason, Err: err,
		Predicted: dur(p.predicted), Waited: dur(max(waited, 0)),
	})
}

// answered reports an answer observed at now to Trace.Answered; hold is the
// bucket's hold before it. It requires that b.mu is not held.
func (b *Bucket) answered(f *Flight, status int, q *Quota, now, hold instant) {
	if b.trace == nil || b.trace.Answered == nil {
		return
	}
	ctx := context.Background()
	if f != nil && f.ctx != nil {
		ctx = f.ctx
	}
	a := AnswerInfo{Name: b.name, Status: status, Quota: *q}
	b.mu.Lock()
	a.Limit = b.limit
	if b.hold > hold && b.hold > now {
		a.Cooldown = dur(b.hold.sub(now))
		a.Until = b.wall(b.hold)
	}
	b.mu.Unlock()
	b.trace.Answered(ctx, a)
}
