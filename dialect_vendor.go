package throttle

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"
)

// redditWindow is Reddit's documented 10-minute averaging window.
const redditWindow = 10 * time.Minute

// quotaOf reads a limit, remaining, reset triple of plain headers.
func (p *parser) quotaOf(limit, remaining, reset []string) Quota {
	q := unknownQuota()
	q.Limit = leastCount(limit)
	q.Remaining = leastCount(remaining)
	if t, ok := p.latestReset(reset); ok {
		q.Reset = t
	}
	return q
}

// namedQuotas reads the request quota of the dialects that name their quotas in
// the header name, and when c collects all every other named quota:
//   - OpenAI, https://platform.openai.com/docs/guides/rate-limits
//     x-ratelimit-{limit,remaining,reset}-{requests,tokens}, resets as Go
//     durations ("6m0s", "20ms");
//   - Anthropic, https://docs.anthropic.com/en/api/rate-limits
//     anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset},
//     resets in RFC 3339;
//   - Linear, https://linear.app/developers/rate-limiting
//     X-RateLimit-{Requests,Complexity}-{Limit,Remaining,Reset}, resets in
//     epoch milliseconds.
func (p *parser) namedQuotas(c *choice) {
	q := p.quotaOf(p.get(fReqLimit), p.get(fReqRemaining), p.get(fReqReset))
	if q.statesQuota() {
		q.Policy = "requests"
	}
	if c.all && len(p.named) > 0 {
		slices.SortFunc(p.named, func(a, b namedField) int {
			return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(a.key, b.key))
		})
		for i := 0; i < len(p.named); {
			if periodOf(p.named[i].name) >= 0 {
				i++ // Kong's, read by kong
				continue
			}
			j := i
			var v [3][]string
			for ; j < len(p.named) && p.named[j].name == p.named[i].name; j++ {
				v[p.named[j].kind] = append(v[p.named[j].kind], p.named[j].vals...)
			}
			nq := p.quotaOf(v[kindLimit], v[kindRemaining], v[kindReset])
			if nq.statesQuota() {
				nq.Policy = p.named[i].name
				c.extra(nq)
			}
			i = j
		}
	}
	c.add(&q)
}

// kong reads the headers of Kong's rate-limiting plugin
// (https://developer.konghq.com/plugins/rate-limiting/):
// X-RateLimit-Limit-Minute and X-RateLimit-Remaining-Minute for each period
// it limits (Second, Minute, Hour, Day, Month, Year). The request quota is
// the period with the least remaining, the shorter on a tie, as Kong's own
// RateLimit-* fields choose; the others are extras.
func (p *parser) kong(c *choice) {
	var qs [len(periods)]Quota
	for i := range qs {
		qs[i] = unknownQuota()
	}
	for _, n := range p.named {
		i := periodOf(n.name)
		if i < 0 {
			continue
		}
		q := &qs[i]
		switch n.kind {
		case kindLimit:
			q.Limit = leastStated(q.Limit, leastCount(n.vals))
		case kindRemaining:
			q.Remaining = leastStated(q.Remaining, leastCount(n.vals))
		case kindReset:
			if t, ok := p.latestReset(n.vals); ok {
				q.Reset = laterOf(q.Reset, t)
			}
		}
	}
	pick := -1
	for i := range qs {
		q := &qs[i]
		if !q.statesQuota() {
			continue
		}
		q.Window, q.Policy = periods[i].window, periods[i].name
		if pick < 0 || q.Remaining >= 0 && (qs[pick].Remaining < 0 || q.Remaining < qs[pick].Remaining) {
			pick = i
		}
	}
	for i := range qs {
		if i != pick && qs[i].statesQuota() {
			c.extra(qs[i])
		}
	}
	if pick >= 0 {
		c.add(&qs[pick])
	}
}

// hubspot reads HubSpot's headers
// (https://developers.hubspot.com/docs/guides/apps/api-usage/usage-details):
// X-HubSpot-RateLimit-Max and -Remaining over -Interval-Milliseconds, the
// per-second -Secondly and -Secondly-Remaining, and the per-day -Daily and
// -Daily-Remaining.
func (p *parser) hubspot(c *choice) {
	interval := unknownQuota()
	interval.Limit = leastCount(p.get(fHSMax))
	interval.Remaining = leastCount(p.get(fHSRemaining))
	if interval.Limit >= 0 || interval.Remaining >= 0 {
		interval.Window, _ = longestDelay(p.get(fHSInterval), time.Millisecond, math.MaxInt64)
	}
	secondly := unknownQuota()
	secondly.Limit = leastCount(p.get(fHSSecondly))
	secondly.Remaining = leastCount(p.get(fHSSecondlyRemaining))
	if secondly.statesQuota() {
		secondly.Window, secondly.Policy = time.Second, "secondly"
	}
	daily := unknownQuota()
	daily.Limit = leastCount(p.get(fHSDaily))
	daily.Remaining = leastCount(p.get(fHSDailyRemaining))
	if daily.statesQuota() {
		daily.Window, daily.Policy = 24*time.Hour, "daily"
	}
	all := [...]Quota{interval, secondly, daily}
	pick := -1
	for i, q := range all {
		if !q.statesQuota() {
			continue
		}
		if pick < 0 {
			pick = i
		} else {
			c.extra(q)
		}
	}
	if pick >= 0 {
		c.add(&all[pick])
	}
}

// shopify reads X-Shopify-Shop-Api-Call-Limit: used/limit
// (https://shopify.dev/docs/api/usage/rate-limits, REST Admin API).
func (p *parser) shopify(c *choice) {
	q := unknownQuota()
	for e := (elems{vals: p.get(fShopify)}); ; {
		s, ok := e.next()
		if !ok {
			break
		}
		if lim, rem, ok := usedOfLimit(s); ok {
			q.Limit = leastStated(q.Limit, lim)
			q.Remaining = leastStated(q.Remaining, rem)
		}
	}
	c.add(&q)
}

// salesforce reads Sforce-Limit-Info: api-usage=25/5000 and its per-app
// variants (https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/headers_api_usage.htm).
// The org-wide api-usage is the request quota; the others are extras.
func (p *parser) salesforce(c *choice) {
	q := unknownQuota()
	for e := (elems{vals: p.get(fSforce)}); ; {
		s, ok := e.next()
		if !ok {
			break
		}
		name, usage, ok := strings.Cut(s, "=")
		if !ok {
			continue
		}
		name = trimOWS(name)
		usage, _, _ = strings.Cut(usage, "(") // per-app-api-usage=17/250(appName=x)
		lim, rem, ok := usedOfLimit(trimOWS(usage))
		if !ok || name == "" {
			continue
		}
		if eqFold(name, "api-usage") {
			q.Limit = leastStated(q.Limit, lim)
			q.Remaining = leastStated(q.Remaining, rem)
			q.Policy = name
		} else {
			c.extra(Quota{Limit: lim, Remaining: rem, Policy: name})
		}
	}
	c.add(&q)
}

// usedOfLimit reads "used/limit" and returns the limit and what remains.
func usedOfLimit(s string) (limit, remaining float64, ok bool) {
	u, l, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, false
	}
	used, ok1 := parseCount(trimOWS(u))
	limit, ok2 := parseCount(trimOWS(l))
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	return limit, max(limit-used, 0), true
}

// xRateLimit reads the X-RateLimit-* family:
//   - GitHub, https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api:
//     Limit, Remaining, Used, Reset (epoch seconds), Resource;
//   - Discord, https://discord.com/developers/docs/topics/rate-limits:
//     Reset as a float epoch, Reset-After in float seconds (preferred), Bucket;
//   - Reddit, https://github.com/reddit-archive/reddit/wiki/API: Used,
//     Remaining (a float) and Reset in delta seconds, no Limit;
//   - Jira Cloud, https://developer.atlassian.com/cloud/jira/platform/rate-limiting/:
//     Reset as minute-precision ISO 8601, RateLimit-Reason.
func (p *parser) xRateLimit(c *choice) {
	q := unknownQuota()
	q.Limit, q.Window = limitList(p.get(fXLimit), nil)
	q.Remaining = leastCount(p.get(fXRemaining))
	if d, ok := longestDelay(p.get(fXResetAfter), time.Second, maxAhead); ok {
		q.Reset = p.after(d)
	} else if t, ok := p.latestReset(p.get(fXReset)); ok {
		q.Reset = t
	}
	if (q.Limit < 0) != (q.Remaining < 0) && p.mask&(1<<fXUsed) != 0 {
		p.xUsed(&q)
	}
	if p.mask&fieldSet(fXReplenish, fXFillRate) != 0 {
		p.refill(&q)
	}
	if p.mask&(1<<fRLReason) != 0 && q.statesQuota() {
		q.Policy = firstValue(p.get(fRLReason))
	}
	c.add(&q)
}

// refill completes the quota of a token bucket that states how fast it
// refills rather than when it resets:
//   - Spring Cloud Gateway's RedisRateLimiter
//     (https://docs.spring.io/spring-cloud-gateway/reference/spring-cloud-gateway-server-webflux/gatewayfilter-factories/requestratelimiter-factory.html):
//     X-RateLimit-Replenish-Rate tokens a second into a bucket of
//     X-RateLimit-Burst-Capacity, a request costing X-RateLimit-Requested-Tokens
//     (1 when not stated), X-RateLimit-Remaining in tokens;
//   - Atlassian Data Center
//     (https://confluence.atlassian.com/adminjiraserver/improving-instance-stability-with-rate-limiting-983794911.html):
//     X-RateLimit-FillRate tokens every X-RateLimit-Interval-Seconds into a
//     bucket of X-RateLimit-Limit.
//
// Limit and Remaining count requests; the window is the time the bucket
// takes to fill from empty (so that Limit over Window is its rate), and a
// reset not stated is when it will be full, as GCRA servers state theirs.
func (p *parser) refill(q *Quota) {
	size, cost, perSecond := q.Limit, 1.0, -1.0
	if rate := leastCount(p.get(fXReplenish)); rate >= 0 {
		perSecond = rate
		size = leastStated(size, leastCount(p.get(fXBurst)))
		if n := greatestCount(p.get(fXRequested)); n > 0 {
			cost = n
		}
	} else if interval := greatestCount(p.get(fXInterval)); interval > 0 {
		perSecond = leastCount(p.get(fXFillRate)) / interval
	}
	if perSecond <= 0 || size < 0 {
		return
	}
	fill := size / perSecond // seconds
	if fill > maxAhead.Seconds() {
		return // a rate no bucket refills at
	}
	tokens := q.Remaining
	q.Limit = math.Floor(size / cost)
	q.Window = time.Duration(fill * float64(time.Second))
	if tokens >= 0 {
		q.Remaining = math.Floor(tokens / cost)
		if q.Reset.IsZero() {
			q.Reset = p.after(time.Duration(max(size-tokens, 0) / perSecond * float64(time.Second)))
		}
	}
}

// xUsed completes from X-RateLimit-Used a quota that states only one of
// its limit and remaining count.
func (p *parser) xUsed(q *Quota) {
	used := greatestCount(p.get(fXUsed))
	switch {
	case used < 0:
	case q.Limit < 0:
		// Reddit states what was used and what is left, not the limit,
		// over a 10-minute window.
		q.Limit = used + q.Remaining
		if !q.Reset.IsZero() && q.Reset.Sub(p.now) <= redditWindow {
			q.Window = redditWindow
		}
	default:
		q.Remaining = max(q.Limit-used, 0)
	}
}

// xRateLimitDash reads X-Rate-Limit-Limit, -Remaining and -Reset (X,
// https://docs.x.com/x-api/fundamentals/rate-limits; Okta,
// https://developer.okta.com/docs/reference/rl-best-practices/, both epoch
// seconds) and Zendesk's X-Rate-Limit
// (https://developer.zendesk.com/api-reference/introduction/rate-limits/).
func (p *parser) xRateLimitDash(c *choice) {
	q := p.quotaOf(p.get(fXDLimit), p.get(fXDRemaining), p.get(fXDReset))
	if q.Limit < 0 {
		q.Limit = leastCount(p.get(fZendeskLimit))
	}
	c.add(&q)
}
