package throttle

import (
	"context"
	"math"
	"net/http"
	"time"
)

// A Priority orders the callers waiting in a bucket's queue: a waiter of a
// higher priority is served before those of lower priorities, and callers
// of one priority are served first-in first-out. There are three levels;
// the zero value is [PriorityNormal]. Values beyond the levels count as the
// nearest level.
//
// Priorities reorder only the queue. [Bucket.Allow] takes no priority and
// never takes a token while anyone waits; a caller that finds nobody of
// its priority or higher waiting is admitted at once if the tokens are
// there, whatever waits at lower priorities.
//
// Waiting raises a waiter's priority ([Config.Aging]): a waiter is
// served as if it had arrived d×Aging earlier, d being how many levels above
// PriorityLow it stands. So a caller is never overtaken by one that
// arrived more than (its priority's lead)×Aging after it: PriorityLow waits
// for PriorityHigh callers arriving up to 2×Aging after it, and then for
// nobody new.
type Priority int

const (
	// PriorityLow is for work that can wait: background syncs, prefetching.
	PriorityLow Priority = -1
	// PriorityNormal is the default: requests whose context carries no
	// priority.
	PriorityNormal Priority = 0
	// PriorityHigh is for a user waiting on the answer.
	PriorityHigh Priority = 1
)

// levels is the number of priority levels.
const levels = int(PriorityHigh-PriorityLow) + 1

// DefaultAging is how long a waiter waits to rise one priority level when
// Config.Aging is zero.
const DefaultAging = 5 * time.Second

func (p Priority) String() string {
	switch p.level() {
	case 0:
		return "low"
	case 2:
		return "high"
	}
	return "normal"
}

// level is the index of p's level in a queue: 0 for PriorityLow.
func (p Priority) level() int {
	return int(min(max(p, PriorityLow), PriorityHigh) - PriorityLow)
}

// A level is the waiters of one level, in order of service.
type level struct {
	head, tail *waiter
	len        int
	tokens     int
	// slack is at most the least margin (deadline − planned time) of its
	// waiters: an arrival that puts n tokens ahead of them re-plans them
	// only when their margin may have run out.
	slack float64
}

// link puts w at the tail of l.
func (l *level) link(w *waiter) {
	w.prev = l.tail
	if l.tail == nil {
		l.head = w
	} else {
		l.tail.next = w
	}
	l.tail = w
	l.len++
	l.tokens += w.n
}

// unlink takes w out of l.
func (l *level) unlink(w *waiter) {
	if w.prev == nil {
		l.head = w.next
	} else {
		w.prev.next = w.next
	}
	if w.next == nil {
		l.tail = w.prev
	} else {
		w.next.prev = w.prev
	}
	w.prev, w.next = nil, nil
	l.len--
	l.tokens -= w.n
	if l.len == 0 {
		l.slack = math.Inf(1)
	}
}

// init readies an empty queue whose waiters rise a level per aging
// (Config.Aging).
func (q *queue) init(aging time.Duration) {
	switch {
	case aging == 0:
		q.aging = float64(DefaultAging)
	case aging > 0:
		q.aging = float64(aging)
	default:
		q.aging = math.Inf(1)
	}
	for i := range q.lv {
		q.lv[i].slack = math.Inf(1)
	}
}

// age moves up the waiters that have waited long enough to rise a level,
// so that the levels hold the order of service at now. Each level's
// oldest rises first; a waiter rises at most levels−1 times.
func (q *queue) age(now instant) {
	for i := range levels - 1 {
		l := &q.lv[i]
		for w := l.head; w != nil && now >= w.since.add(float64(i+1-int(w.base))*q.aging); w = l.head {
			up := &q.lv[i+1]
			up.slack = min(up.slack, l.slack) // before unlink resets an emptied level's
			l.unlink(w)
			w.level++
			up.link(w)
		}
	}
}

// ahead returns the tokens queued at level i and above: those of the
// waiters a caller of level i would be served after.
func (q *queue) ahead(i int) int {
	n := 0
	for ; i < levels; i++ {
		n += q.lv[i].tokens
	}
	return n
}

// firstDeadline returns the soonest deadline of a waiter in the queue:
// never if none has one.
func (q *queue) firstDeadline() instant {
	at := never
	q.each(func(w *waiter) { at = min(at, w.deadline) })
	return at
}

// last returns the waiter that would be served last, nil if none.
func (q *queue) last() *waiter {
	for i := range levels {
		if w := q.lv[i].tail; w != nil {
			return w
		}
	}
	return nil
}

type priorityKey struct{}

// boxed holds each level's Priority as an interface value, so that
// WithPriority allocates only its context.
var boxed = [levels]any{PriorityLow, PriorityNormal, PriorityHigh}

// WithPriority returns a copy of ctx that carries p, as its nearest level:
// [Bucket.Wait], [Bucket.WaitN], [Bucket.Begin] and a [Transport] queue a
// caller with that context at priority p.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, boxed[p.level()])
}

// PriorityFrom returns the priority ctx carries, [PriorityNormal] if none.
func PriorityFrom(ctx context.Context) Priority {
	p, _ := ctx.Value(priorityKey{}).(Priority)
	return p
}

// waitContext returns the context a request waits with: its own, with the
// priority Transport.Priority computes for it, if set.
func (t *Transport) waitContext(req *http.Request) context.Context {
	if t.Priority == nil {
		return req.Context()
	}
	return WithPriority(req.Context(), t.Priority(req))
}
