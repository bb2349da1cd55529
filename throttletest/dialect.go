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

// setHeaders sets Date and the dialect's rate-limit headers for d.
func (h *Handler) setHeaders(hdr http.Header, d decision) {
	skewed := d.now.Add(h.cfg.DateSkew)
	hdr.Set("Date", skewed.UTC().Format(http.TimeFormat))

	limit := strconv.FormatInt(d.limit, 10)
	remaining := strconv.FormatInt(d.remaining, 10)
	untilReset := d.reset.Sub(d.now)
	hostile := h.cfg.Hostile

	switch h.cfg.Dialect {
	case GitHub:
		// https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api
		used := strconv.FormatInt(d.limit-d.remaining, 10)
		reset := strconv.FormatInt(ceilUnix(d.reset.Add(h.cfg.DateSkew)), 10)
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
		reset := strconv.FormatInt(ceilSeconds(untilReset), 10)
		policy := limit + ";w=" + strconv.FormatInt(max(ceilSeconds(d.window), 1), 10)
		if hostile {
			limit, remaining, reset = hostileLimit, hostileRemaining, hostileResetDelta
			policy = hostileLimit + ";w=" + hostileWindow
		}
		hdr.Set("RateLimit-Limit", limit)
		hdr.Set("RateLimit-Remaining", remaining)
		hdr.Set("RateLimit-Reset", reset)
		hdr.Set("RateLimit-Policy", policy)
	case IETFStructured:
		// draft-ietf-httpapi-ratelimit-headers-08 and later: structured
		// fields (RFC 9651) naming the policy.
		window := strconv.FormatInt(max(ceilSeconds(d.window), 1), 10)
		reset := strconv.FormatInt(ceilSeconds(untilReset), 10)
		if hostile {
			limit, remaining, reset, window = hostileLimit, hostileRemaining, hostileResetDelta, hostileWindow
		}
		name := sfString(d.resource)
		hdr.Set("RateLimit-Policy", name+";q="+limit+";w="+window)
		hdr.Set("RateLimit", name+";r="+remaining+";t="+reset)
	case OpenAI:
		// https://platform.openai.com/docs/guides/rate-limits
		reset := ceilMillis(untilReset).String()
		if hostile {
			limit, remaining, reset = hostileLimit, hostileRemaining, hostileResetDuration
		}
		hdr.Set("X-Ratelimit-Limit-Requests", limit)
		hdr.Set("X-Ratelimit-Remaining-Requests", remaining)
		hdr.Set("X-Ratelimit-Reset-Requests", reset)
	}

	if h.sendsRetryAfter(d.outcome) {
		retry := strconv.FormatInt(max(ceilSeconds(d.retry), 1), 10)
		if hostile {
			retry = hostileRetryAfter
		}
		hdr.Set("Retry-After", retry)
	}
}

// sendsRetryAfter reports whether an answer of kind o carries Retry-After.
func (h *Handler) sendsRetryAfter(o outcome) bool {
	switch o {
	case refused:
		switch h.cfg.Dialect {
		case IETF, IETFStructured, RetryAfterOnly:
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
func ceilSeconds(d time.Duration) int64 {
	return ceilDiv(max(int64(d), 0), int64(time.Second))
}

// ceilMillis returns d rounded up to a whole millisecond.
func ceilMillis(d time.Duration) time.Duration {
	return time.Duration(ceilDiv(max(int64(d), 0), int64(time.Millisecond))) * time.Millisecond
}

// ceilUnix returns t as Unix seconds, rounded up, so that a client waiting
// until then is never early.
func ceilUnix(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
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
