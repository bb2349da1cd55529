package throttletest

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The values a Hostile handler sends in place of the true ones.
const (
	hostileRetryAfter = "999999999"            // about 31.7 years
	hostileLimit      = "18446744073709551616" // 2⁶⁴: overflows every integer type
	hostileRemaining  = "-1"
	hostileUsed       = "NaN"
	hostileResetUnix  = "99999999999" // the year 5138
	hostileResetDelta = "999999999"
	hostileWindow     = "0"
)

// hostileResetDuration is the longest time.Duration, as OpenAI's format.
var hostileResetDuration = time.Duration(math.MaxInt64).String()

// hostileDate is the last second of the year 9999, the latest date the
// four-digit year of every DateFormat can state.
var hostileDate = time.Date(9999, time.December, 31, 23, 59, 59, 0, time.UTC)

// setHeaders sets Date and the dialect's rate-limit headers for d.
func (h *Handler) setHeaders(hdr http.Header, d decision) {
	skewed := d.now.Add(h.cfg.DateSkew)
	hdr.Set("Date", skewed.UTC().Format(http.TimeFormat))

	limit := strconv.FormatInt(d.limit, 10)
	remaining := strconv.FormatInt(d.remaining, 10)
	untilReset := d.reset.Sub(d.now)
	hostile := h.cfg.Hostile
	round := h.cfg.ResetRounding

	dialect := h.cfg.Dialect
	if d.outcome == refused && h.cfg.BareRefusals {
		dialect = RetryAfterOnly
	}
	switch dialect {
	case GitHub:
		// https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api
		used := strconv.FormatInt(d.limit-d.remaining, 10)
		reset := strconv.FormatInt(round.unix(d.reset.Add(h.cfg.DateSkew)), 10)
		if hostile {
			limit, remaining, used, reset = hostileLimit, hostileRemaining, hostileUsed, hostileResetUnix
		}
		hdr.Set("X-RateLimit-Limit", limit)
		hdr.Set("X-RateLimit-Remaining", remaining)
		hdr.Set("X-RateLimit-Used", used)
		hdr.Set("X-RateLimit-Reset", reset)
		hdr.Set("X-RateLimit-Resource", d.resource)
	case IETF:
		// draft-ietf-httpapi-ratelimit-headers-06 and earlier.
		reset := strconv.FormatInt(round.seconds(untilReset), 10)
		policy := limit + ";w=" + strconv.FormatInt(max(ceilSeconds(d.window), 1), 10)
		if hostile {
			limit, remaining, reset = hostileLimit, hostileRemaining, hostileResetDelta
			policy = hostileLimit + ";w=" + hostileWindow
		}
		hdr.Set("RateLimit-Limit", limit)
		hdr.Set("RateLimit-Remaining", remaining)
		hdr.Set("RateLimit-Reset", reset)
		if !h.cfg.NoPolicy {
			hdr.Set("RateLimit-Policy", policy)
		}
	case IETFStructured:
		// draft-ietf-httpapi-ratelimit-headers-08 and later: structured
		// fields (RFC 9651) naming the policy.
		window := strconv.FormatInt(max(ceilSeconds(d.window), 1), 10)
		reset := strconv.FormatInt(round.seconds(untilReset), 10)
		if hostile {
			limit, remaining, reset, window = hostileLimit, hostileRemaining, hostileResetDelta, hostileWindow
		}
		name := sfString(d.resource)
		hdr.Set("RateLimit-Policy", name+";q="+limit+";w="+window)
		hdr.Set("RateLimit", name+";r="+remaining+";t="+reset)
	case OpenAI:
		// https://platform.openai.com/docs/guides/rate-limits
		reset := round.millis(untilReset).String()
		if hostile {
			limit, remaining, reset = hostileLimit, hostileRemaining, hostileResetDuration
		}
		hdr.Set("X-Ratelimit-Limit-Requests", limit)
		hdr.Set("X-Ratelimit-Remaining-Requests", remaining)
		hdr.Set("X-Ratelimit-Reset-Requests", reset)
		for _, t := range d.tokens {
			limit, remaining, reset := strconv.FormatInt(t.limit, 10), strconv.FormatInt(t.remaining, 10), round.millis(t.reset.Sub(d.now)).String()
			if hostile {
				limit, remaining, reset = hostileLimit, hostileRemaining, hostileResetDuration
			}
			hdr.Set("X-Ratelimit-Limit-"+t.name, limit)
			hdr.Set("X-Ratelimit-Remaining-"+t.name, remaining)
			hdr.Set("X-Ratelimit-Reset-"+t.name, reset)
		}
	case Anthropic:
		// https://docs.anthropic.com/en/api/rate-limits
		set := func(name, limit, remaining string, reset time.Time) {
			r := time.Unix(round.unix(reset.Add(h.cfg.DateSkew)), 0).UTC().Format(time.RFC3339)
			if hostile {
				limit, remaining, r = hostileLimit, hostileRemaining, hostileDate.Format(time.RFC3339)
			}
			hdr.Set("Anthropic-Ratelimit-"+name+"-Limit", limit)
			hdr.Set("Anthropic-Ratelimit-"+name+"-Remaining", remaining)
			hdr.Set("Anthropic-Ratelimit-"+name+"-Reset", r)
		}
		set("Requests", limit, remaining, d.reset)
		for _, t := range d.tokens {
			set(t.name, strconv.FormatInt(t.limit, 10), strconv.FormatInt(t.remaining, 10), t.reset)
		}
	case Spring:
		// https://docs.spring.io/spring-cloud-gateway/reference/spring-cloud-gateway-server-webflux/gatewayfilter-factories/requestratelimiter-factory.html
		rate := strconv.FormatFloat(float64(d.perWindow)/d.window.Seconds(), 'f', -1, 64)
		burst := strconv.FormatInt(d.burst, 10)
		if hostile {
			remaining, rate, burst = hostileRemaining, hostileLimit, hostileLimit
		}
		hdr.Set("X-RateLimit-Remaining", remaining)
		hdr.Set("X-RateLimit-Replenish-Rate", rate)
		hdr.Set("X-RateLimit-Burst-Capacity", burst)
		hdr.Set("X-RateLimit-Requested-Tokens", "1")
	case Bucket4j:
		// https://github.com/MarcGiffing/bucket4j-spring-boot-starter
		if hostile {
			remaining = hostileRemaining
		}
		hdr.Set("X-Rate-Limit-Remaining", remaining)
		if d.outcome == refused {
			retry := strconv.FormatInt(round.seconds(d.retry), 10)
			if hostile {
				retry = hostileRetryAfter
			}
			hdr.Set("X-Rate-Limit-Retry-After-Seconds", retry)
		}
	case DateReset:
		reset := h.date(d.reset)
		if hostile {
			limit, remaining, reset = hostileLimit, hostileRemaining, hostileDate.Format(h.cfg.DateFormat.layout())
		}
		hdr.Set("X-RateLimit-Limit", limit)
		hdr.Set("X-RateLimit-Remaining", remaining)
		hdr.Set("X-RateLimit-Reset", reset)
	}

	if h.cfg.RetryAfterEvery && dialect != None && (d.outcome == admitted || d.outcome == refused) {
		wait := untilReset
		if d.outcome == refused {
			wait = d.retry
		}
		if hostile {
			hdr.Set("Retry-After", hostileRetryAfter)
		} else {
			hdr.Set("Retry-After", strconv.FormatFloat(float64(round.millis(wait)/time.Millisecond)/1000, 'f', -1, 64))
		}
	} else if h.sendsRetryAfter(d.outcome) {
		hdr.Set("Retry-After", h.retryAfter(d))
	}
}

// retryAfter is the Retry-After value for d: delta seconds (RFC 9110,
// section 10.2.3), or in the DateReset dialect a date.
func (h *Handler) retryAfter(d decision) string {
	switch {
	case h.cfg.Dialect == DateReset && h.cfg.Hostile:
		return hostileDate.Format(h.cfg.DateFormat.layout())
	case h.cfg.Dialect == DateReset:
		return h.date(d.now.Add(d.retry))
	case h.cfg.Hostile:
		return hostileRetryAfter
	}
	s := h.cfg.ResetRounding.seconds(d.retry)
	if h.cfg.ResetRounding == RoundUp {
		s = max(s, 1)
	}
	return strconv.FormatInt(s, 10)
}

// date formats the real time t as a date on the server's clock, rounded to
// the second by Config.ResetRounding, in Config.DateFormat.
func (h *Handler) date(t time.Time) string {
	s := h.cfg.ResetRounding.unix(t.Add(h.cfg.DateSkew))
	return time.Unix(s, 0).UTC().Format(h.cfg.DateFormat.layout())
}

// sendsRetryAfter reports whether an answer of kind o carries Retry-After.
func (h *Handler) sendsRetryAfter(o outcome) bool {
	switch o {
	case refused:
		switch h.cfg.Dialect {
		case IETF, IETFStructured, RetryAfterOnly, DateReset, Anthropic:
			return true
		}
	case secondary:
		return true
	case shed:
		return h.cfg.Dialect != None
	}
	return false
}

// ceilSeconds returns d in whole seconds, rounded up.
func ceilSeconds(d time.Duration) int64 { return RoundUp.seconds(d) }

// seconds returns d (negative: 0) in whole seconds, rounded by r.
func (r Rounding) seconds(d time.Duration) int64 {
	return r.div(max(int64(d), 0), int64(time.Second))
}

// millis returns d (negative: 0) rounded by r to a whole millisecond.
func (r Rounding) millis(d time.Duration) time.Duration {
	return time.Duration(r.div(max(int64(d), 0), int64(time.Millisecond))) * time.Millisecond
}

// unix returns t as Unix seconds, rounded by r.
func (r Rounding) unix(t time.Time) int64 {
	return t.Unix() + r.div(int64(t.Nanosecond()), int64(time.Second))
}

// div returns a/b rounded by r, for a ≥ 0 and b > 0.
func (r Rounding) div(a, b int64) int64 {
	q, rem := a/b, a%b
	switch r {
	case Truncate:
		return q
	case Nearest:
		if rem >= b-rem { // rem ≥ b/2, halves up
			q++
		}
		return q
	case NextSecond:
		return q + 1
	}
	if rem != 0 {
		q++
	}
	return q
}

// sfString returns s as a structured-field String (RFC 9651, section 3.3.3):
// quoted, with '"' and '\' escaped and bytes outside printable ASCII
// replaced by '?'.
func sfString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c > 0x7e:
			b.WriteByte('?')
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
