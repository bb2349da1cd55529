package throttle

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ErrBadCost: a request's cost, from [WithCost] or Transport.Cost, is
// negative.
var ErrBadCost = errors.New("throttle: bad cost")

// costKey is the context key of a request's cost.
type costKey struct{}

// A cost is what [WithCost] puts in a context: the cost the caller gave, and
// the latest admission made with it, which [Settle] settles.
type cost struct {
	n int

	mu    sync.Mutex
	b     *Bucket // the bucket of the latest admission; nil before one
	taken int     // the tokens that admission has taken, as settled
}

// WithCost returns a copy of ctx under which a [Transport] charges each
// request n tokens of its key's bucket instead of 1 (or of what
// Transport.Cost says): the request's cost in the unit the bucket counts
// (see Transport.Unit), the prompt and max_tokens of an LLM request, say.
// The context passes through SDKs that build the request themselves:
//
//	ctx := throttle.WithCost(ctx, estimate)
//	resp, err := client.Chat.Completions.New(ctx, params)
//	// ...
//	throttle.Settle(ctx, used)
//
// A negative n makes the Transport refuse the request with [ErrBadCost];
// one above the bucket's burst, with [ErrExceedsBurst]. Use one context
// from WithCost per request: [Settle] settles the latest request admitted
// under it.
func WithCost(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, costKey{}, &cost{n: n})
}

// costOf returns the cost ctx gives requests, if it gives one.
func costOf(ctx context.Context) (*cost, bool) {
	c, ok := ctx.Value(costKey{}).(*cost)
	return c, ok
}

// admitted records that the request with this cost was admitted by b,
// taking the cost's n tokens.
func (c *cost) admitted(b *Bucket) {
	c.mu.Lock()
	c.b, c.taken = b, c.n
	c.mu.Unlock()
}

// Settle reports the actual cost of the latest request admitted under ctx, a
// context from [WithCost] (or one derived from it, as the Request of a
// response is): n tokens in all. The bucket gives back what the request took
// beyond n, and takes what it took short of n, as [Flight.Settle] does.
// Settling again replaces the earlier figure: Settle(ctx, n) twice settles n
// once. Settle returns [ErrBadCost] for a negative n, and an error when ctx
// does not come from WithCost or no request was admitted under it (refused,
// or not sent through a Transport): there is nothing to settle. A settled
// request whose bucket the Transport has since dropped changes nothing.
func Settle(ctx context.Context, n int) error {
	if n < 0 {
		return fmt.Errorf("%w: settled at %d", ErrBadCost, n)
	}
	c, ok := costOf(ctx)
	if !ok {
		return errors.New("throttle: Settle: the context has no cost (see WithCost)")
	}
	c.mu.Lock()
	b, delta := c.b, n-c.taken
	if b != nil {
		c.taken = n
	}
	c.mu.Unlock()
	if b == nil {
		return errors.New("throttle: Settle: no request was admitted under the context")
	}
	b.settle(delta)
	return nil
}

// SettleResponse is [Settle] for the request resp answers: Settle with
// resp.Request's context.
func SettleResponse(resp *http.Response, n int) error {
	if resp == nil || resp.Request == nil {
		return errors.New("throttle: SettleResponse: no request")
	}
	return Settle(resp.Request.Context(), n)
}

// Settle reports the actual cost of the flight's request, n tokens in all,
// once it is known (the usage in an LLM's answer): the bucket gives back
// what BeginN took beyond n, so that callers queued behind may go sooner,
// or takes what it took short of n, which may leave the bucket in debt and
// hold them longer. Waiters are re-planned as after [Bucket.SetLimit].
// Settle may come before or after [Flight.Done]; settling again replaces
// the earlier figure (n twice settles n once), and a Flight's copies do not
// know of each other's settling. The server's Remaining, in the headers of
// later answers, corrects the bucket as always. A negative n is an error;
// the zero Flight and a bucket kept in a [Store] (whose shared tokens the
// server's Remaining corrects) ignore Settle.
func (f *Flight) Settle(n int) error {
	if n < 0 {
		return fmt.Errorf("%w: settled at %d", ErrBadCost, n)
	}
	if f.b == nil {
		return nil
	}
	delta := n - f.cost
	f.cost = n
	f.b.settle(delta)
	return nil
}

// settle takes delta more tokens (a negative delta gives them back) for a
// request already admitted, and re-plans the queue.
func (b *Bucket) settle(delta int) {
	if delta == 0 || b.store != nil {
		return
	}
	defer b.emit()
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.ownLocked()
	d := float64(delta)
	// A refund never fills the bucket beyond its burst; a debit may leave
	// it in debt, as a correction does.
	b.setTokensLocked(now, min(b.tokensAtLocked(now)-d, float64(b.burst)))
	if now < b.capEnd {
		b.capBase -= d // the server counts what the request really cost
	}
	b.replanLocked(now)
	b.releaseLocked(now)
}

// cost returns the tokens req takes and the cost its context gives, if any:
// the context's, else Cost's, else 1.
func (t *Transport) cost(req *http.Request) (int, *cost) {
	if c, ok := costOf(req.Context()); ok {
		return c.n, c
	}
	if t.Cost != nil {
		return t.Cost(req), nil
	}
	return 1, nil
}

// begin admits a request of cost n to b and records the admission in cc,
// the context's cost (nil: none). With Meters (g not nil), the request takes
// its cost of each Meter's bucket too, all at once, in the bucket's gate.
func (t *Transport) begin(ctx context.Context, b *Bucket, n int, cc *cost, now instant, g *gate, ms []meterCost) (admission, error) {
	if n < 0 {
		return admission{}, fmt.Errorf("%w: %d tokens", ErrBadCost, n)
	}
	if g == nil {
		f, err := t.begin1(ctx, b, n, cc, now)
		return admission{f: f}, err
	}
	bs, costs := make([]*Bucket, 1+len(ms)), make([]int, 1+len(ms))
	bs[0], costs[0] = b, n
	for i, m := range ms {
		bs[1+i], costs[1+i] = m.b, m.n
	}
	fs, err := g.begin(ctx, bs, costs, now)
	if err != nil {
		return admission{}, err
	}
	if cc != nil {
		cc.admitted(b)
	}
	return admission{f: fs[0], meters: fs[1:]}, nil
}

// begin1 admits a request of cost n to b alone, as begin does.
func (t *Transport) begin1(ctx context.Context, b *Bucket, n int, cc *cost, now instant) (Flight, error) {
	f, err := b.beginAt(ctx, n, now)
	if err == nil && cc != nil {
		cc.admitted(b)
	}
	return f, err
}

// unitQuota returns what h says of the quota named unit (see
// Transport.Unit): when h does not name that quota, only the Retry-After
// and scope of the request quota, none of its counts.
func unitQuota(h http.Header, now time.Time, unit string) Quota {
	return pickQuota(ParseQuotas(h, now), h, now, unit)
}

// pickQuota is unitQuota from qs, what ParseQuotas read of h.
func pickQuota(qs []Quota, h http.Header, now time.Time, unit string) Quota {
	for _, q := range qs {
		if strings.EqualFold(q.Policy, unit) || strings.EqualFold(q.Unit, unit) {
			return q // ParseQuotas copies Retry-After and the scope onto each
		}
	}
	primary := ParseHeaders(h, now)
	q := unknownQuota()
	q.RetryAfter, q.Scope = primary.RetryAfter, primary.Scope
	return q
}
