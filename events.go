package throttle

import (
	"context"
	"log/slog"
	"time"

	"golang.org/x/time/rate"
)

// EventKind says what an [Event] reports.
type EventKind int

const (
	// EventWait: a caller waited longer than Config.SlowWait for its tokens.
	EventWait EventKind = iota + 1
	// EventRefused: a caller was refused (Err says why).
	EventRefused
	// EventCooldown: the server put the bucket into a cooldown until Until.
	EventCooldown
	// EventLimit: the bucket's rate changed to Limit, learned from the
	// server or found by probing.
	EventLimit
	// EventStoreDown: the Config.Store failed (Err says how); the bucket
	// limits this process to Config.StoreShare of the rate meanwhile.
	EventStoreDown
	// EventStoreUp: the Config.Store answers again.
	EventStoreUp
)

func (k EventKind) String() string {
	switch k {
	case EventWait:
		return "wait"
	case EventRefused:
		return "refused"
	case EventCooldown:
		return "cooldown"
	case EventLimit:
		return "limit"
	case EventStoreDown:
		return "store down"
	case EventStoreUp:
		return "store up"
	}
	return "unknown"
}

// An Event is something a user whose program seems stuck needs to see: a
// long wait, a refusal, a cooldown, a change of rate. See [Config.OnEvent].
type Event struct {
	Kind  EventKind
	Name  string        // Config.Name: the Transport's key
	Wait  time.Duration // EventWait: how long the caller waited
	Until time.Time     // EventCooldown: when it ends
	Limit rate.Limit    // EventLimit: the new rate
	Err   error         // EventRefused, EventStoreDown: why
}

// noteLocked records an event for emit.
func (b *Bucket) noteLocked(e Event) {
	if b.onEvent == nil && b.logger == nil {
		return
	}
	e.Name = b.name
	b.pending = append(b.pending, e)
}

// emit delivers the recorded events, outside the lock so that a hook may
// call the bucket. It requires that b.mu is not held.
func (b *Bucket) emit() {
	if b.onEvent == nil && b.logger == nil {
		return
	}
	b.mu.Lock()
	evs := b.pending
	b.pending = nil
	b.mu.Unlock()
	for _, e := range evs {
		if b.onEvent != nil {
			b.onEvent(e)
		}
		if b.logger != nil {
			b.log(e)
		}
	}
}

func (b *Bucket) log(e Event) {
	ctx := context.Background()
	attrs := []slog.Attr{slog.String("bucket", e.Name)}
	switch e.Kind {
	case EventWait:
		b.logger.LogAttrs(ctx, slog.LevelInfo, "throttle: long wait", append(attrs, slog.Duration("wait", e.Wait))...)
	case EventRefused:
		b.logger.LogAttrs(ctx, slog.LevelWarn, "throttle: refused", append(attrs, slog.Any("err", e.Err))...)
	case EventCooldown:
		b.logger.LogAttrs(ctx, slog.LevelWarn, "throttle: cooldown", append(attrs, slog.Time("until", e.Until), slog.Duration("for", time.Until(e.Until).Round(time.Millisecond)))...)
	case EventLimit:
		b.logger.LogAttrs(ctx, slog.LevelInfo, "throttle: rate", append(attrs, slog.Float64("limit", float64(e.Limit)))...)
	case EventStoreDown:
		b.logger.LogAttrs(ctx, slog.LevelWarn, "throttle: store down, limiting locally", append(attrs, slog.Any("err", e.Err))...)
	case EventStoreUp:
		b.logger.LogAttrs(ctx, slog.LevelInfo, "throttle: store up", attrs...)
	}
}
