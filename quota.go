package throttle

import (
	"math"
	"time"
)

// A Quota is what one HTTP response says about the client's rate limit: the
// number of quota units a window allows (Limit), the number left in the
// current window (Remaining), when that window starts over (Reset), how long
// to stay away before the next request (RetryAfter) and how long a window is
// (Window). Units are requests unless Policy names another unit ("tokens",
// "input-tokens", ...) or Unit states one; counts may be fractional (Reddit
// reports "595.0").
//
// A field the response did not state holds its not-stated value: -1 for Limit
// and Remaining (as http.Request.ContentLength uses -1), the zero time for
// Reset, zero for RetryAfter and Window, and "" for Policy, Unit and Scope. Note
// that the zero Quota is not "nothing stated": it states an exhausted quota
// of zero.
//
// Reset is on the client's clock. A relative reset is added to the arrival
// time passed to [ParseHeaders]; an absolute one is moved by the difference
// between the response's Date header and that arrival time, so clock skew
// between server and client does not shift it. Reset carries the location
// and monotonic reading of the arrival time and is never before it.
//
// A Quota is a plain value with no methods that modify it; it is safe to copy
// and to share between goroutines.
type Quota struct {
	Limit      float64       // quota units per window; -1 when the response did not say
	Remaining  float64       // quota units left in this window; -1 when the response did not say; never above Limit
	Reset      time.Time     // when the window resets; zero when the response did not say; up to 2 s in the past when the server truncated it
	RetryAfter time.Duration // wait before the next request; zero when the response did not say
	Window     time.Duration // the policy's window length; zero when the response did not say

	// Policy names the quota: the IETF policy name ("default", "burst"...),
	// the quota family for OpenAI, Anthropic and Linear ("requests",
	// "tokens", "input-tokens", "complexity"...), the Salesforce usage name
	// ("api-usage"), the HubSpot limit ("daily", "secondly"), the GitLab
	// RateLimit-Name or the Jira RateLimit-Reason; "" when unnamed.
	Policy string

	// Unit is the unit the quota counts, as an IETF policy states it (its
	// qu parameter): "requests", "content-bytes", "concurrent-requests"
	// (how many requests may be in flight at once: Limit is that number),
	// or another the server names; "" when not stated.
	Unit string

	// Scope is the server-declared bucket the response belongs to: GitHub's
	// X-RateLimit-Resource (core, search, graphql...) or Discord's
	// X-RateLimit-Bucket; "" when not said.
	Scope string
}

// Known reports whether the response stated anything at all about its rate
// limit, that is whether any field of q differs from its not-stated value.
func (q Quota) Known() bool {
	return q.statesQuota() || q.RetryAfter > 0 || q.Policy != "" || q.Unit != "" || q.Scope != ""
}

// statesQuota reports whether q states a count, a reset or a window: what
// one dialect must say to be chosen over the dialects after it.
func (q Quota) statesQuota() bool {
	return q.Limit >= 0 || q.Remaining >= 0 || !q.Reset.IsZero() || q.Window > 0
}

// notStated is the value of Limit and Remaining when the response did not say.
const notStated = -1

func unknownQuota() Quota { return Quota{Limit: notStated, Remaining: notStated} }

// A choice gathers the dialects' quotas in their order of precedence: the
// first that states a quota is the primary, and a later one that describes
// the same quota fills its gaps. For ParseQuotas (all), the others are kept,
// merged in the same way, and so are the secondary quotas a dialect states
// beside its request quota (extras: tokens, other policies, other windows).
type choice struct {
	primary *Quota // the caller's result
	found   bool
	all     bool
	others  *[]Quota // at most one per dialect reading
	extras  *[]Quota // at most maxQuotas
}

// add offers q, a dialect's request quota.
func (c *choice) add(q *Quota) {
	switch {
	case !q.statesQuota():
	case !c.found:
		*c.primary, c.found = *q, true
	case sameQuota(c.primary, q):
		fillFrom(c.primary, q)
	case c.all:
		others := *c.others
		for k := range others {
			if sameQuota(&others[k], q) {
				fillFrom(&others[k], q)
				return
			}
		}
		*c.others = append(others, *q)
	}
}

// extra keeps q, a secondary quota, when collecting all.
func (c *choice) extra(q Quota) {
	if c.all && len(*c.extras) < maxQuotas {
		*c.extras = append(*c.extras, q)
	}
}

// sameQuota reports whether a and b, read from different dialects of one
// response, describe the same quota: they agree on Limit or Remaining and
// contradict each other on nothing.
func sameQuota(a, b *Quota) bool {
	agree := false
	if a.Limit >= 0 && b.Limit >= 0 {
		if a.Limit != b.Limit {
			return false
		}
		agree = true
	}
	if a.Remaining >= 0 && b.Remaining >= 0 {
		if a.Remaining != b.Remaining {
			return false
		}
		agree = true
	}
	if a.Window > 0 && b.Window > 0 && a.Window != b.Window {
		return false
	}
	if a.Policy != "" && b.Policy != "" && a.Policy != b.Policy {
		return false
	}
	return agree
}

// fillFrom copies into q the fields q left unstated and b states.
func fillFrom(q, b *Quota) {
	if q.Limit < 0 {
		q.Limit = b.Limit
	}
	if q.Remaining < 0 {
		q.Remaining = b.Remaining
	}
	if q.Reset.IsZero() {
		q.Reset = b.Reset
	}
	if q.Window == 0 {
		q.Window = b.Window
	}
	if q.Policy == "" {
		q.Policy = b.Policy
	}
}

// sanitize enforces the invariants Quota documents, whatever the dialects
// produced.
func sanitize(q *Quota, now time.Time) {
	if !(q.Limit >= 0) || math.IsInf(q.Limit, 0) {
		q.Limit = notStated
	}
	if !(q.Remaining >= 0) || math.IsInf(q.Remaining, 0) {
		q.Remaining = notStated
	}
	if q.Limit >= 0 && q.Remaining > q.Limit {
		q.Remaining = q.Limit
	}
	if !q.Reset.IsZero() && q.Reset.Before(now.Add(-truncated)) {
		q.Reset = now
	}
	q.RetryAfter = max(q.RetryAfter, 0)
	q.Window = max(q.Window, 0)
}
