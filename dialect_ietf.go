package throttle

import (
	"strings"
	"time"

	"github.com/go-throttle/throttle/internal/sfv"
)

// ietf reads the IETF fields in all their drafts into c: the structured
// fields of drafts 08 and later, the dictionary of draft 07, and the fields
// of drafts up to 06, in that order of precedence. When c collects all, the
// policies the preferred reading does not describe are its extras.
func (p *parser) ietf(c *choice) {
	// Room for the usual few members of each field; more go to the heap.
	var polBuf, rlBuf [4]sfv.Item
	pols, ok := sfv.List(p.get(fRLPolicy), keepPolicyParams, polBuf[:0], maxMembers)
	if !ok {
		pols = nil // RFC 9651 §4.2: a field that fails to parse is ignored
	}
	rl, rlOK := sfv.List(p.get(fRL), keepRateLimitParams, rlBuf[:0], maxMembers)
	if !rlOK {
		rl = nil
	}
	var chosen Quota
	p.ietfStructured(c, &chosen, rl, pols)
	c.add(&chosen)
	if !rlOK || c.all || p.mask&draft06Fields != 0 || hasIntegerItem(pols) {
		p.ietfDrafts(c, &chosen, pols, !rlOK)
	}
}

// ietfDrafts reads the IETF drafts before 08 into c, after the structured
// fields (chosen): the dictionary of draft 07 when RateLimit is no List
// (dict), the fields of drafts up to 06, and when c collects all the
// integer policies the chosen reading does not describe.
func (p *parser) ietfDrafts(c *choice, chosen *Quota, pols []sfv.Item, dict bool) {
	if dict {
		// draft-ietf-httpapi-ratelimit-headers-07 §5 made RateLimit a
		// Dictionary; a field that is no List may be one.
		var dictBuf [4]sfv.Member
		if d, ok := sfv.Dict(p.get(fRL), sfv.KeepNone, dictBuf[:0], maxMembers); ok && len(d) > 0 {
			q := p.ietf07(d, pols)
			c.add(&q)
			if !chosen.statesQuota() {
				*chosen = q
			}
		}
	}
	if p.mask&draft06Fields != 0 || hasIntegerItem(pols) {
		q := p.ietf06(c, pols)
		c.add(&q)
		if !chosen.statesQuota() {
			*chosen = q
		}
	}
	if c.all {
		// The integer policies of drafts up to 07 other than the chosen one.
		if !chosen.statesQuota() {
			*chosen = unknownQuota()
		}
		for i := range pols {
			it := &pols[i]
			lim, ok := sfCount(it.Bare)
			if !ok || it.Bare.Kind != sfv.Integer {
				continue
			}
			w, _ := sfWindow(it)
			if lim == chosen.Limit && w == chosen.Window {
				continue
			}
			c.extra(Quota{Limit: lim, Remaining: notStated, Window: w})
		}
	}
}

// ietfStructured reads RateLimit and RateLimit-Policy as defined by
// draft-ietf-httpapi-ratelimit-headers-08 and later (§3, §4): lists of
// policies named by a String (a Token in -08), linked by name, with the
// parameters q (quota), w (window seconds), qu (quota unit), r (remaining)
// and t (seconds until the window resets). Unknown parameters are ignored.
func (p *parser) ietfStructured(c *choice, q *Quota, items, pols []sfv.Item) {
	var buf [4]ietfPolicy
	ps := buf[:0]
	for field, members := range [...][]sfv.Item{items, pols} { // RateLimit's first
		for j := range members {
			it := &members[j]
			name, ok := it.Bare.Text()
			if !ok {
				continue
			}
			var s *ietfPolicy
			ps, s = namedPolicy(ps, name)
			if field == 0 {
				s.fromRateLimit(it)
			} else {
				s.fromPolicy(it)
			}
		}
	}
	// The request policy named in RateLimit with the least remaining; else
	// the first such policy that states anything; else (RateLimit-Policy
	// alone) the first request policy that states anything.
	pick := -1
	for i := range ps {
		if s := &ps[i]; s.requests && s.live && s.remaining >= 0 && (pick < 0 || s.remaining < ps[pick].remaining) {
			pick = i
		}
	}
	for _, live := range [...]bool{true, false} {
		for i := range ps {
			if s := &ps[i]; pick < 0 && s.requests && (s.live || !live) && s.statesQuota() {
				pick = i
			}
		}
	}
	if c.all {
		for i := range ps {
			if i != pick && ps[i].statesQuota() {
				var e Quota
				p.policyQuota(&e, &ps[i])
				c.extra(e)
			}
		}
	}
	if pick < 0 {
		*q = unknownQuota()
		return
	}
	p.policyQuota(q, &ps[pick])
}

// An ietfPolicy gathers what RateLimit and RateLimit-Policy say of one policy.
type ietfPolicy struct {
	name      string
	limit     float64       // notStated if not stated
	remaining float64       // notStated if not stated
	reset     time.Duration // from the response's arrival; negative if not stated
	window    time.Duration
	live      bool   // named by the RateLimit field
	requests  bool   // counts requests (qu absent or "requests")
	unit      string // qu, "" if absent
}

func newPolicy(name string) ietfPolicy {
	return ietfPolicy{name: name, limit: notStated, remaining: notStated, reset: -1, requests: true}
}

// fromRateLimit applies a member of the RateLimit field to its policy.
func (s *ietfPolicy) fromRateLimit(it *sfv.Item) {
	s.live = true
	if r := it.Params[pR]; r.Kind == sfv.Integer && r.Num >= 0 {
		s.remaining = leastStated(s.remaining, r.Num)
	}
	if t, ok := sfSeconds(it.Params[pT]); ok && t <= maxAhead {
		s.reset = max(s.reset, t) // the latest reset
	}
}

// fromPolicy applies a member of the RateLimit-Policy field to its policy.
func (s *ietfPolicy) fromPolicy(it *sfv.Item) {
	if q := it.Params[pQ]; q.Kind == sfv.Integer && q.Num >= 0 {
		s.limit = leastStated(s.limit, q.Num)
	}
	if w, ok := sfWindow(it); ok && s.window == 0 {
		s.window = w
	}
	// §3.1.2: the default quota unit is "requests".
	if u := it.Params[pQU]; u.Kind == sfv.String || u.Kind == sfv.Token {
		s.requests, s.unit = u.Str == "requests", u.Str
	}
}

// statesQuota is Quota.statesQuota for the policy.
func (s *ietfPolicy) statesQuota() bool {
	return s.limit >= 0 || s.remaining >= 0 || s.reset >= 0 || s.window > 0
}

// policyQuota sets *q to the Quota the policy describes.
func (p *parser) policyQuota(q *Quota, s *ietfPolicy) {
	*q = Quota{Limit: s.limit, Remaining: s.remaining, Window: s.window, Policy: s.name, Unit: s.unit}
	if s.reset >= 0 {
		q.Reset = p.after(s.reset)
	}
}

// namedPolicy returns ps with a policy called name, added if it was not
// there, and that policy.
func namedPolicy(ps []ietfPolicy, name string) ([]ietfPolicy, *ietfPolicy) {
	for i := range ps {
		if ps[i].name == name {
			return ps, &ps[i]
		}
	}
	ps = append(ps, newPolicy(name))
	return ps, &ps[len(ps)-1]
}

// ietf07 reads the RateLimit dictionary of
// draft-ietf-httpapi-ratelimit-headers-07 §5 (limit, remaining, reset in
// delta seconds) and takes the window from the RateLimit-Policy item whose
// quota equals the limit.
func (p *parser) ietf07(dict []sfv.Member, pols []sfv.Item) Quota {
	q := unknownQuota()
	for _, m := range dict {
		switch m.Key {
		case "limit":
			if v, ok := sfCount(m.Item.Bare); ok {
				q.Limit = v
			}
		case "remaining":
			if v, ok := sfCount(m.Item.Bare); ok {
				q.Remaining = v
			}
		case "reset":
			if m.Item.Bare.Kind == sfv.Integer && m.Item.Bare.Num >= 0 {
				if t, ok := p.resetNumber(uint64(m.Item.Bare.Num), 0); ok {
					q.Reset = t
				}
			}
		}
	}
	if q.Limit >= 0 {
		q.Window = windowFor(q.Limit, pols)
	}
	return q
}

// ietf06 reads RateLimit-Limit, -Remaining and -Reset of
// draft-ietf-httpapi-ratelimit-headers up to -06, and GitLab's variant of
// them (https://docs.gitlab.com/ee/administration/settings/user_and_ip_rate_limits.html:
// RateLimit-Reset as epoch seconds, RateLimit-ResetTime as an HTTP-date,
// RateLimit-Observed, RateLimit-Name). It is read only when the response has
// those fields or an integer policy.
func (p *parser) ietf06(c *choice, pols []sfv.Item) Quota {
	q := unknownQuota()
	q.Limit, q.Window = limitList(p.get(fRLLimit), c)
	q.Remaining = leastCount(p.get(fRLRemaining))
	r1, ok1 := p.latestReset(p.get(fRLReset))
	r2, ok2 := p.latestReset(p.get(fRLResetTime))
	switch {
	case ok1 && ok2:
		q.Reset = laterOf(r1, r2)
	case ok1:
		q.Reset = r1
	case ok2:
		q.Reset = r2
	}
	if obs := greatestCount(p.get(fRLObserved)); q.Remaining < 0 && q.Limit >= 0 && obs >= 0 {
		q.Remaining = max(q.Limit-obs, 0)
	}
	if q.Limit >= 0 && q.Window == 0 {
		q.Window = windowFor(q.Limit, pols)
	}
	if !q.statesQuota() {
		// RateLimit-Policy alone (drafts 03 to 07): its first policy.
		for i := range pols {
			if it := &pols[i]; it.Bare.Kind == sfv.Integer && it.Bare.Num >= 0 {
				q.Limit = it.Bare.Num
				q.Window, _ = sfWindow(it)
				break
			}
		}
	}
	if q.statesQuota() {
		q.Policy = firstValue(p.get(fRLName))
	}
	return q
}

// hasIntegerItem reports whether a policy is an Integer, as in the drafts up
// to 07.
func hasIntegerItem(pols []sfv.Item) bool {
	for i := range pols {
		if pols[i].Bare.Kind == sfv.Integer {
			return true
		}
	}
	return false
}

// windowFor returns the window of the first integer policy item (drafts up
// to 07) whose quota equals limit.
func windowFor(limit float64, pols []sfv.Item) time.Duration {
	for i := range pols {
		if it := &pols[i]; it.Bare.Kind == sfv.Integer && it.Bare.Num >= 0 && it.Bare.Num == limit {
			if w, ok := sfWindow(it); ok {
				return w
			}
		}
	}
	return 0
}

// limitList reads a limit header that may use the list form of the early
// IETF drafts, "10, 10;w=1, 1000;w=3600": the effective limit is the least
// parameter-free item (the first item when every item has parameters), and
// the window is that of the first item with the same quota and a w
// parameter. With c, the other windowed items are its extras.
func limitList(vals []string, c *choice) (float64, time.Duration) {
	if len(vals) == 1 {
		// The usual case, a number, without the list's two passes: 10%
		// of BenchmarkParseHeadersGitHub.
		if v, ok := parseCount(trimOWS(vals[0])); ok {
			return v, 0
		}
	}
	limit, first := float64(notStated), float64(notStated)
	for e := (elems{vals: vals}); ; {
		s, ok := e.next()
		if !ok {
			break
		}
		v, _, params, ok := limitItem(s)
		if !ok {
			continue
		}
		if first < 0 {
			first = v
		}
		if !params {
			limit = leastStated(limit, v)
		}
	}
	if limit < 0 {
		limit = first
	}
	if limit < 0 {
		return notStated, 0
	}
	var window time.Duration
	for e := (elems{vals: vals}); ; {
		s, ok := e.next()
		if !ok {
			break
		}
		v, w, _, ok := limitItem(s)
		if !ok || w == 0 {
			continue
		}
		if v == limit && window == 0 {
			window = w
		} else if c != nil {
			c.extra(Quota{Limit: v, Remaining: notStated, Window: w})
		}
	}
	return limit, window
}

// limitItem reads "10" or "10;w=1": a count and, when it has one, the
// window parameter in seconds.
func limitItem(s string) (v float64, w time.Duration, params, ok bool) {
	num, rest, params := strings.Cut(s, ";")
	v, ok = parseCount(trimOWS(num))
	for rest != "" {
		var param string
		param, rest, _ = strings.Cut(rest, ";")
		if key, val, _ := strings.Cut(trimOWS(param), "="); key == "w" {
			if ip, ns, ok := parseDecimal(val); ok && ns == 0 && ip > 0 {
				w, _ = scaleDuration(ip, 0, time.Second)
			}
		}
	}
	return v, w, params, ok
}

// draft06Fields are the fields of the drafts up to 06 (RateLimit-Policy
// aside, which later drafts share).
var draft06Fields = fieldSet(fRLLimit, fRLRemaining, fRLReset, fRLResetTime, fRLObserved)

// The parameters the RateLimit fields define (draft-ietf-httpapi-ratelimit-headers-08
// and later §3.1, §4.1), kept in sfv.Item.Params at these indexes:
// RateLimit-Policy's q (quota), w (window, in seconds) and qu (quota unit),
// RateLimit's r (remaining) and t (seconds to the reset).
const (
	pQ, pW, pQU = 0, 1, 2
	pR, pT      = 0, 1
)

func keepPolicyParams(key string) int {
	switch key {
	case "q":
		return pQ
	case "w":
		return pW
	case "qu":
		return pQU
	}
	return -1
}

func keepRateLimitParams(key string) int {
	switch key {
	case "r":
		return pR
	case "t":
		return pT
	}
	return -1
}

// sfCount returns a non-negative Integer or Decimal.
func sfCount(b sfv.Bare) (float64, bool) {
	if (b.Kind == sfv.Integer || b.Kind == sfv.Decimal) && b.Num >= 0 {
		return b.Num, true
	}
	return 0, false
}

// sfSeconds returns a non-negative Integer number of seconds as a Duration.
func sfSeconds(b sfv.Bare) (time.Duration, bool) {
	if b.Kind != sfv.Integer || b.Num < 0 {
		return 0, false
	}
	return scaleDuration(uint64(b.Num), 0, time.Second)
}

// sfWindow returns the w parameter of a policy: a positive Integer number
// of seconds.
func sfWindow(it *sfv.Item) (time.Duration, bool) {
	w, ok := sfSeconds(it.Params[pW])
	return w, ok && w > 0
}
