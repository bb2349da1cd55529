// Package otelthrottle reports what throttle's buckets do as OpenTelemetry
// metrics, and shows their waits on the span of the request that waited.
//
// One call wires a [throttle.Transport] ([Instrument]) or makes a wired
// [throttle.Bucket] ([NewBucket]). The counts, gauges and the server's
// last-seen quota are observed from the buckets' Stats when the reader
// collects, so they cost nothing per request; the wait and cooldown
// histograms and the span events come from the buckets' [throttle.Trace]
// hooks, which run only for a caller that queued and once per answer.
//
// # Instruments
//
// Every instrument carries throttle.key (the Transport's key: a host unless
// Transport.Key says otherwise) and, for a scope the server named (GitHub's
// X-RateLimit-Resource), throttle.scope. There is one series per bucket and
// attribute value, never per URL:
//
//	throttle.wait.duration      histogram, s          throttle.reason, throttle.outcome
//	throttle.cooldown.duration  histogram, s          throttle.reason
//	throttle.requests           counter, {request}    throttle.outcome, throttle.reason
//	throttle.cooldowns          counter, {cooldown}
//	throttle.corrections        counter, {correction}
//	throttle.queue.length       updowncounter, {request}
//	throttle.inflight           updowncounter, {request}
//	throttle.tokens             gauge, {token}
//	throttle.limit              gauge, {request}/s
//	throttle.cooldown.remaining gauge, s
//	throttle.drift              gauge, {request}
//	throttle.server.limit       gauge, {request}
//	throttle.server.remaining   gauge, {request}
//
// throttle.wait.duration counts the callers that queued (those admitted at
// once are throttle.requests{throttle.outcome="admitted"} minus its count):
// throttle.reason says what held them back (rate, quota, cooldown,
// learning) and throttle.outcome how they left (admitted, refused,
// canceled). throttle.requests counts every caller: admitted, refused with
// throttle.reason queue_full, wait_too_long or exceeds_burst, and canceled.
// throttle.cooldown.duration's reason is retry_after, reset or backoff: what
// set the cooldown's length. The server gauges are the Limit and Remaining
// of the latest answer that stated them; throttle.drift is the local
// estimate minus the server's count at the last correction.
//
// A Transport drops the buckets of keys idle for its IdleTimeout: their
// series end, and start again from zero if the key comes back.
//
// # Traces
//
// When the context of a request that queued carries a recording span, the
// span gets a throttle.wait event (throttle.reason, throttle.outcome,
// throttle.wait.predicted and throttle.wait.actual in seconds), so that a
// slow request in a trace says that it waited for the quota and why. An
// answer that puts the bucket into a cooldown adds a throttle.cooldown
// event (its length, end, reason and the HTTP status) to its request's span.
package otelthrottle

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-throttle/throttle"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"
)

// ScopeName is the instrumentation scope of the meter.
const ScopeName = "github.com/go-throttle/throttle/otelthrottle"

// Attribute keys.
const (
	KeyAttr     = attribute.Key("throttle.key")
	ScopeAttr   = attribute.Key("throttle.scope")
	ReasonAttr  = attribute.Key("throttle.reason")
	OutcomeAttr = attribute.Key("throttle.outcome")
)

// Telemetry is the instrumentation of one Transport or Bucket. Close it to
// stop reporting.
type Telemetry struct {
	meter  metric.Meter
	in     instruments
	closed atomic.Bool
	reg    metric.Registration

	wait, cooldown metric.Float64Histogram

	mu     sync.Mutex
	server map[string]seen                     // by bucket name: the quota last stated
	opts   map[optKey]metric.MeasurementOption // cached attribute sets
}

// seen is the server's quota as last stated: -1 when never stated.
type seen struct{ limit, remaining float64 }

type optKey struct{ name, reason, outcome string }

// Instrument wires t to mp (nil: the global MeterProvider): its buckets
// report their waits and answers, and mp's readers observe their stats.
// It sets t.Config.Trace, keeping the hooks already there, so it must be
// called before t's first request, and not while another goroutine uses t;
// it fails if t has buckets already. Call it once per Transport: a second
// call reports every wait and answer twice.
func Instrument(t *throttle.Transport, mp metric.MeterProvider) (*Telemetry, error) {
	if t == nil {
		return nil, errors.New("otelthrottle: Instrument: nil Transport")
	}
	if len(t.Stats().Keys) > 0 {
		return nil, errors.New("otelthrottle: Instrument: the Transport has sent requests already; wire it before its first request")
	}
	tel, err := newTelemetry(mp)
	if err != nil {
		return nil, err
	}
	if err := tel.start(func() map[string]throttle.BucketStats { return t.Stats().Keys }); err != nil {
		return nil, err
	}
	t.Config.Trace = tel.chain(t.Config.Trace)
	return tel, nil
}

// NewBucket returns a bucket configured by c, as [throttle.NewBucket] does,
// wired to mp (nil: the global MeterProvider). Its series carry c.Name as
// throttle.key. Hooks already in c.Trace are kept.
func NewBucket(c throttle.Config, mp metric.MeterProvider) (*throttle.Bucket, *Telemetry, error) {
	tel, err := newTelemetry(mp)
	if err != nil {
		return nil, nil, err
	}
	c.Trace = tel.chain(c.Trace)
	b := throttle.NewBucket(c)
	if err := tel.start(func() map[string]throttle.BucketStats {
		return map[string]throttle.BucketStats{c.Name: b.Stats()}
	}); err != nil {
		return nil, nil, err
	}
	return b, tel, nil
}

// Close stops the reporting: mp's readers no longer observe the buckets,
// and their hooks record nothing more.
func (tel *Telemetry) Close() error {
	tel.closed.Store(true)
	return tel.reg.Unregister()
}

// waitBounds and cooldownBounds are the histograms' bucket boundaries, in
// seconds: waits up to DefaultMaxWait, cooldowns up to DefaultMaxCooldown.
var (
	waitBounds     = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
	cooldownBounds = []float64{0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600}
)

// newTelemetry makes the instruments on mp's meter.
func newTelemetry(mp metric.MeterProvider) (*Telemetry, error) {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(ScopeName)
	tel := &Telemetry{meter: m, server: map[string]seen{}, opts: map[optKey]metric.MeasurementOption{}}
	var errs []error
	check := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	tel.wait, err = m.Float64Histogram("throttle.wait.duration", metric.WithUnit("s"),
		metric.WithDescription("Time callers waited in the queue for their tokens."),
		metric.WithExplicitBucketBoundaries(waitBounds...))
	check(err)
	tel.cooldown, err = m.Float64Histogram("throttle.cooldown.duration", metric.WithUnit("s"),
		metric.WithDescription("Length of the cooldowns the server put the buckets into."),
		metric.WithExplicitBucketBoundaries(cooldownBounds...))
	check(err)

	in := &tel.in
	in.requests, err = m.Int64ObservableCounter("throttle.requests", metric.WithUnit("{request}"),
		metric.WithDescription("Callers admitted, refused (by reason) and canceled."))
	check(err)
	in.cooldowns, err = m.Int64ObservableCounter("throttle.cooldowns", metric.WithUnit("{cooldown}"),
		metric.WithDescription("Cooldowns the server put the buckets into."))
	check(err)
	in.corrections, err = m.Int64ObservableCounter("throttle.corrections", metric.WithUnit("{correction}"),
		metric.WithDescription("Answers whose Remaining allowed less than the bucket would have admitted."))
	check(err)
	in.queue, err = m.Int64ObservableUpDownCounter("throttle.queue.length", metric.WithUnit("{request}"),
		metric.WithDescription("Callers waiting for tokens."))
	check(err)
	in.inflight, err = m.Int64ObservableUpDownCounter("throttle.inflight", metric.WithUnit("{request}"),
		metric.WithDescription("Requests sent and not yet answered."))
	check(err)
	in.tokens, err = m.Float64ObservableGauge("throttle.tokens", metric.WithUnit("{token}"),
		metric.WithDescription("Tokens in the bucket; negative after a correction."))
	check(err)
	in.limit, err = m.Float64ObservableGauge("throttle.limit", metric.WithUnit("{request}/s"),
		metric.WithDescription("The bucket's current rate; not reported while it has none."))
	check(err)
	in.coolLeft, err = m.Float64ObservableGauge("throttle.cooldown.remaining", metric.WithUnit("s"),
		metric.WithDescription("Time left in the current cooldown; 0 when none."))
	check(err)
	in.drift, err = m.Float64ObservableGauge("throttle.drift", metric.WithUnit("{request}"),
		metric.WithDescription("Local estimate minus the server's count at the last correction."))
	check(err)
	in.srvLimit, err = m.Float64ObservableGauge("throttle.server.limit", metric.WithUnit("{request}"),
		metric.WithDescription("The quota per window the server last stated."))
	check(err)
	in.srvRemaining, err = m.Float64ObservableGauge("throttle.server.remaining", metric.WithUnit("{request}"),
		metric.WithDescription("The quota left in the window, as the server last stated it."))
	check(err)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return tel, nil
}

// start has the observable instruments report stats when a reader
// collects.
func (tel *Telemetry) start(stats func() map[string]throttle.BucketStats) error {
	in := &tel.in
	var err error
	tel.reg, err = tel.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		tel.observe(o, stats())
		return nil
	}, in.requests, in.cooldowns, in.corrections, in.queue, in.inflight, in.tokens,
		in.limit, in.coolLeft, in.drift, in.srvLimit, in.srvRemaining)
	return err
}

// instruments are the observable instruments, read by observe.
type instruments struct {
	requests, cooldowns, corrections                       metric.Int64ObservableCounter
	queue, inflight                                        metric.Int64ObservableUpDownCounter
	tokens, limit, coolLeft, drift, srvLimit, srvRemaining metric.Float64ObservableGauge
}

// observe reports the stats of every bucket, by name, and forgets what it
// kept of the buckets gone.
func (tel *Telemetry) observe(o metric.Observer, stats map[string]throttle.BucketStats) {
	in := &tel.in
	now := time.Now()
	tel.mu.Lock()
	server := make(map[string]seen, len(tel.server))
	for name, s := range tel.server {
		if _, ok := stats[name]; ok {
			server[name] = s
		} else {
			delete(tel.server, name)
		}
	}
	for k := range tel.opts {
		if _, ok := stats[k.name]; !ok {
			delete(tel.opts, k)
		}
	}
	tel.mu.Unlock()
	for name, s := range stats {
		key, scope := split(name)
		base := attrs(key, scope)
		set := metric.WithAttributeSet(attribute.NewSet(base...))
		count := func(v uint64, kv ...attribute.KeyValue) {
			o.ObserveInt64(in.requests, int64(v), metric.WithAttributeSet(attribute.NewSet(append(kv, base...)...)))
		}
		count(s.Admitted, OutcomeAttr.String("admitted"))
		count(s.Canceled, OutcomeAttr.String("canceled"))
		count(s.RefusedFull, OutcomeAttr.String("refused"), ReasonAttr.String("queue_full"))
		count(s.RefusedTooLong, OutcomeAttr.String("refused"), ReasonAttr.String("wait_too_long"))
		count(s.RefusedBurst, OutcomeAttr.String("refused"), ReasonAttr.String("exceeds_burst"))
		o.ObserveInt64(in.cooldowns, int64(s.Cooldowns), set)
		o.ObserveInt64(in.corrections, int64(s.Corrections), set)
		o.ObserveInt64(in.queue, int64(s.Queued), set)
		o.ObserveInt64(in.inflight, int64(s.InFlight), set)
		o.ObserveFloat64(in.tokens, s.Tokens, set)
		if s.Limit != rate.Inf && s.Limit > 0 {
			o.ObserveFloat64(in.limit, float64(s.Limit), set)
		}
		o.ObserveFloat64(in.coolLeft, max(s.CooldownUntil.Sub(now), 0).Seconds(), set)
		o.ObserveFloat64(in.drift, s.Drift, set)
		if q, ok := server[name]; ok {
			if q.limit >= 0 {
				o.ObserveFloat64(in.srvLimit, q.limit, set)
			}
			if q.remaining >= 0 {
				o.ObserveFloat64(in.srvRemaining, q.remaining, set)
			}
		}
	}
}

// chain returns a Trace that calls next's hooks (if any), then tel's.
func (tel *Telemetry) chain(next *throttle.Trace) *throttle.Trace {
	tr := &throttle.Trace{Waited: tel.waited, Answered: tel.answered}
	if next == nil {
		return tr
	}
	if w := next.Waited; w != nil {
		tr.Waited = func(ctx context.Context, i throttle.WaitInfo) { w(ctx, i); tel.waited(ctx, i) }
	}
	if a := next.Answered; a != nil {
		tr.Answered = func(ctx context.Context, i throttle.AnswerInfo) { a(ctx, i); tel.answered(ctx, i) }
	}
	return tr
}

// outcome names how a wait ended.
func outcome(err error) string {
	switch {
	case err == nil:
		return "admitted"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, throttle.ErrWaitTooLong):
		return "canceled"
	}
	return "refused"
}

func (tel *Telemetry) waited(ctx context.Context, w throttle.WaitInfo) {
	if tel.closed.Load() {
		return
	}
	reason, out := w.Reason.String(), outcome(w.Err)
	tel.wait.Record(ctx, w.Waited.Seconds(), tel.opt(w.Name, reason, out))
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		key, scope := split(w.Name)
		span.AddEvent("throttle.wait", trace.WithAttributes(append(attrs(key, scope),
			ReasonAttr.String(reason), OutcomeAttr.String(out),
			attribute.Float64("throttle.wait.predicted", w.Predicted.Seconds()),
			attribute.Float64("throttle.wait.actual", w.Waited.Seconds()))...))
	}
}

func (tel *Telemetry) answered(ctx context.Context, a throttle.AnswerInfo) {
	if tel.closed.Load() {
		return
	}
	if a.Status != 0 && (a.Quota.Limit >= 0 || a.Quota.Remaining >= 0) {
		tel.mu.Lock()
		s, ok := tel.server[a.Name]
		if !ok {
			s = seen{-1, -1}
		}
		if a.Quota.Limit >= 0 {
			s.limit = a.Quota.Limit
		}
		if a.Quota.Remaining >= 0 {
			s.remaining = a.Quota.Remaining
		}
		tel.server[a.Name] = s
		tel.mu.Unlock()
	}
	if a.Cooldown <= 0 {
		return
	}
	reason := "backoff"
	switch {
	case a.Quota.RetryAfter > 0:
		reason = "retry_after"
	case !a.Quota.Reset.IsZero():
		reason = "reset"
	}
	tel.cooldown.Record(ctx, a.Cooldown.Seconds(), tel.opt(a.Name, reason, ""))
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		key, scope := split(a.Name)
		span.AddEvent("throttle.cooldown", trace.WithAttributes(append(attrs(key, scope),
			ReasonAttr.String(reason),
			attribute.Int("http.response.status_code", a.Status),
			attribute.Float64("throttle.cooldown.duration", a.Cooldown.Seconds()),
			attribute.String("throttle.cooldown.until", a.Until.UTC().Format(time.RFC3339Nano)))...))
	}
}

// opt returns the attribute set of a bucket's measurement, made once.
func (tel *Telemetry) opt(name, reason, out string) metric.MeasurementOption {
	k := optKey{name, reason, out}
	tel.mu.Lock()
	defer tel.mu.Unlock()
	if o, ok := tel.opts[k]; ok {
		return o
	}
	key, scope := split(name)
	kv := append(attrs(key, scope), ReasonAttr.String(reason))
	if out != "" {
		kv = append(kv, OutcomeAttr.String(out))
	}
	o := metric.WithAttributeSet(attribute.NewSet(kv...))
	tel.opts[k] = o
	return o
}

// attrs returns a bucket's own attributes.
func attrs(key, scope string) []attribute.KeyValue {
	kv := []attribute.KeyValue{KeyAttr.String(key)}
	if scope != "" {
		kv = append(kv, ScopeAttr.String(scope))
	}
	return kv
}

// split splits a bucket's name, as in throttle.TransportStats.Keys, into its
// key and scope: the first '#' not escaped by a '\' starts the scope.
func split(name string) (key, scope string) {
	if !strings.ContainsAny(name, `\#`) {
		return name, ""
	}
	var sb strings.Builder
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '\\' && i+1 < len(name):
			i++
			sb.WriteByte(name[i])
		case c == '#':
			return sb.String(), name[i+1:]
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String(), ""
}
