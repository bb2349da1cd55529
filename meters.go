package throttle

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The Transport's side of Meters: the type, the buckets and costs of a
// request, its flights and their answers. The gate that admits a request to
// all its buckets at once is in gate.go.

// A Meter is a further quota that a [Transport] counts each request
// against, beside its key's bucket: the request quota of an LLM API whose
// bucket counts tokens, a daily quota beside a per-minute one, output tokens
// beside input tokens. Each of the Transport's buckets (a key, or a scope
// the server names) gets one bucket per Meter beside it, which learns from
// that quota's own headers (and its own algorithm: a token bucket's reset
// says when it is full, a window's when it ends). A request goes out only
// when every one of its buckets can take its cost at once; none of them
// holds tokens for it while it waits on another.
type Meter struct {
	// Unit names the quota, as Transport.Unit does: a Quota.Policy or
	// Quota.Unit of [ParseQuotas] ("requests", "tokens", "input-tokens",
	// "output-tokens", an IETF policy's name). Empty: the request quota,
	// as [ParseHeaders] reads it. No two of a Transport's quotas (its Unit
	// and its Meters') may name the same one.
	Unit string

	// Config is the template of the Meter's buckets, as Transport.Config
	// is of the keys': Limit in Unit per second (zero: learn it), Burst.
	// The queue is the one of the Transport's bucket beside which it
	// counts: its MaxQueue and MaxWait are not used. Meters do not work with a Store (here or in Transport.Config):
	// a request with them fails with an error saying so.
	Config Config

	// Cost is what a request costs in Unit, computed before it is sent; it
	// must not read the body. If nil, a request costs 1. A negative cost
	// refuses the request with [ErrBadCost]; one above the Meter's burst,
	// with [ErrExceedsBurst]. [WithCost] and [Settle] are for the
	// Transport's own Unit, not a Meter's.
	Cost func(*http.Request) int
}

// An admission is a Transport's request in flight: its flight in its key's
// bucket and, with Meters, in each Meter's bucket.
type admission struct {
	f      Flight
	meters []Flight // in the order of Transport.Meters
}

// done ends every flight of a with no answer (resp nil) as Flight.Done
// does.
func (a admission) done(resp *http.Response) {
	a.f.Done(resp)
	for _, f := range a.meters {
		f.Done(resp)
	}
}

// unsent ends the flights of a request that was not sent, giving back
// what they took.
func (a admission) unsent() {
	_ = a.f.Settle(0) // n ≥ 0: never an error
	a.f.Done(nil)
	for i := range a.meters {
		_ = a.meters[i].Settle(0)
		a.meters[i].Done(nil)
	}
}

// answerMeters ends the Meters' flights of a with resp, which arrived at
// arrived (at on the buckets' clock): each learns from its own quota's
// headers. Each flight leaves a as it is ended, so that if an event hook
// panics, the caller's deferred a.done ends the others.
func (a *admission) answerMeters(resp *http.Response, arrived time.Time, at instant, ms []Meter) {
	var all []Quota // ParseQuotas, once
	for i, f := range a.meters {
		a.meters[i] = Flight{}
		var mq Quota
		switch {
		case ms[i].Unit == "":
			mq = ParseHeaders(resp.Header, arrived)
		default:
			if all == nil {
				all = ParseQuotas(resp.Header, arrived)
			}
			mq = pickQuota(all, resp.Header, arrived, ms[i].Unit)
		}
		f.doneAt(resp.StatusCode, mq, at)
	}
	a.meters = nil
}

// A meterCost is one of a Transport's Meters for one request: its bucket
// beside the request's and the request's cost in its unit.
type meterCost struct {
	b *Bucket
	n int
}

// meters returns what req costs of each of the Transport's Meters, their
// buckets beside the bucket id, and id's gate; nothing without Meters.
func (t *Transport) meters(id bucketID, req *http.Request) (*gate, []meterCost, error) {
	if len(t.Meters) == 0 {
		return nil, nil, nil
	}
	if err := t.checkUnits(); err != nil {
		return nil, nil, err
	}
	ms := make([]meterCost, len(t.Meters))
	for i, m := range t.Meters {
		ms[i].n = 1
		if m.Cost != nil {
			ms[i].n = m.Cost(req)
		}
		if ms[i].n < 0 {
			return nil, nil, fmt.Errorf("%w: %d %s", ErrBadCost, ms[i].n, cmpUnit(m.Unit))
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.tickLocked()
	for i, m := range t.Meters {
		e := t.getLocked(bucketID{key: id.key, scope: id.scope, unit: cmpUnit(m.Unit)}, now)
		e.used = now
		ms[i].b = e.b
	}
	return t.gateLocked(id), ms, nil
}

// gateLocked returns the gate of the bucket id (its key and scope), making
// it if needed. It requires that t.mu is held.
func (t *Transport) gateLocked(id bucketID) *gate {
	id.unit = ""
	g := t.gates[id]
	if g == nil {
		if t.gates == nil {
			t.gates = make(map[bucketID]*gate)
		}
		g = newGate()
		t.gates[id] = g
	}
	return g
}

// meterConfig returns the Config of the Meter whose unit is unit, as
// cmpUnit names it.
func (t *Transport) meterConfig(unit string) Config {
	for _, m := range t.Meters {
		if cmpUnit(m.Unit) == unit {
			return m.Config
		}
	}
	return t.Config
}

// cmpUnit names a quota unit in a bucket's name: "requests" for the
// request quota's "".
func cmpUnit(unit string) string {
	if unit == "" {
		return "requests"
	}
	return strings.ToLower(unit)
}

// checkUnits reports a quota that the Transport counts twice, and a Store,
// which a gate cannot use: it takes from every bucket under their locks.
func (t *Transport) checkUnits() error {
	if t.Config.Store != nil {
		return errors.New("throttle: Transport.Config.Store cannot be used with Meters")
	}
	for i, m := range t.Meters {
		if m.Config.Store != nil {
			return fmt.Errorf("throttle: Transport.Meters[%d].Config.Store: a Meter's bucket cannot be kept in a Store", i)
		}
		twice := sameUnit(m.Unit, t.Unit)
		for _, o := range t.Meters[:i] {
			twice = twice || sameUnit(m.Unit, o.Unit)
		}
		if twice {
			return fmt.Errorf("throttle: Transport.Meters[%d]: the quota %q is counted twice", i, cmpUnit(m.Unit))
		}
	}
	return nil
}

// sameUnit reports whether two units name one quota, as cmpUnit names them.
func sameUnit(a, b string) bool {
	if a == "" {
		a = "requests"
	}
	if b == "" {
		b = "requests"
	}
	return strings.EqualFold(a, b)
}
