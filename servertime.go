package throttle

import (
	"math"
	"strings"
	"time"
)

// Thresholds that tell the numeric forms of a reset apart and bound what is
// believed.
const (
	// A bare reset number is an epoch when it lies within epochWindow of
	// the response's own clock (its Date, else the arrival time): epoch
	// milliseconds (Linear, OpenRouter) or epoch seconds (GitHub, X, Okta,
	// Discord, GitLab). Any other number is delta seconds (IETF drafts,
	// Reddit). Deciding against the clock rather than a fixed threshold
	// keeps the rule right for clocks far from today's (a test's fake
	// clock at 2000-01-01, say) and for deltas of any plausible size.
	epochWindow = 10 * 365 * 24 * time.Hour
	// maxAhead is how far away a reset or a Retry-After may lie and still
	// be stated, in every form it takes: delta seconds or milliseconds, a
	// Go duration, an epoch, a date. It is the bound a bare number's deltas
	// already had, so that no form can say what another may not.
	maxAhead = epochWindow
	// pastTolerance is how far before the response's Date an absolute reset
	// may lie and still mean "now": Date has one-second resolution, Jira
	// sends minute-precision resets, and a response may sit briefly in a
	// proxy. An earlier reset describes a window long gone and is ignored.
	pastTolerance = 2 * time.Minute
	// truncated is how far in the past an absolute reset is kept as it
	// is: a whole-second reset that a server truncated (the window really
	// ends within the second after it) says more than "now" does.
	truncated = 2 * time.Second
	// dateSanity bounds the skew we accept between the response's Date and
	// the client's clock; a Date further off is garbage (or a response
	// replayed from a cache) and absolute resets fall back to the client's
	// clock.
	dateSanity = 24 * time.Hour
	// dateSkewed is how far the response's Date must be from the local
	// clock for absolute times to be placed against it rather than against
	// the local clock: Date has whole seconds, so within this it tells
	// less than the local clock does.
	dateSkewed = 2 * time.Second
)

// anchor reports whether the response's Date (p.dateSec) is present,
// parseable and within dateSanity of now.
func (p *parser) anchor() bool {
	if p.dateState == 0 {
		p.dateState = -1
		for _, v := range p.get(fDate) {
			v = trimOWS(v)
			date, ok := imfUnix(v) // the format servers send, without allocating
			if !ok {
				var t time.Time
				if t, ok = parseHTTPDate(v, &p.std); !ok {
					continue
				}
				date = t.Unix()
			}
			const saneSec = int64(dateSanity / time.Second)
			ds := date - p.nowSec
			if ds > -saneSec-1 && ds < saneSec+1 {
				if d := time.Duration(ds)*time.Second - time.Duration(p.nowNsec); d > -dateSanity && d < dateSanity {
					p.dateSec, p.dateState = date, 1
				}
			}
			break
		}
	}
	return p.dateState == 1
}

// refSec returns the Unix seconds of the instant server times are measured
// from: the response's Date when usable, else the arrival time. It tells
// epochs from delays, which a wall clock off by hours does not change.
func (p *parser) refSec() int64 {
	if p.anchor() {
		return p.dateSec
	}
	return p.nowSec
}

// fromRef returns how long after the reference instant (see refSec) the
// server instant sec.nsec lies, or false if that overflows a Duration.
func (p *parser) fromRef(sec, nsec int64) (time.Duration, bool) {
	refSec, refNsec := p.nowSec, p.nowNsec
	if p.anchor() {
		// A server clock that is off is corrected by its Date. One that
		// agrees with ours is not: the local clock has nanoseconds where
		// Date has whole seconds, and anchoring a truncated reset to a
		// truncated Date would move it by up to a second either way.
		if skew := (p.dateSec-p.nowSec)*int64(time.Second) - p.nowNsec; skew > int64(dateSkewed) || skew < -int64(dateSkewed) {
			refSec, refNsec = p.dateSec, 0
		}
	}
	const maxSec = math.MaxInt64/int64(time.Second) - 1
	ds := sec - refSec
	if ds > maxSec || ds < -maxSec || sec > math.MaxInt64/2 || sec < math.MinInt64/2 {
		return 0, false
	}
	return time.Duration(ds)*time.Second + time.Duration(nsec-refNsec), true
}

// after returns the local time d after arrival.
func (p *parser) after(d time.Duration) time.Time { return p.now.Add(d) }

// absolute maps an absolute server time onto the client's clock.
func (p *parser) absolute(t time.Time) (time.Time, bool) {
	return p.absoluteUnix(t.Unix(), int64(t.Nanosecond()))
}

// absoluteUnix is absolute for a server time given as Unix seconds and
// nanoseconds.
func (p *parser) absoluteUnix(sec, nsec int64) (time.Time, bool) {
	d, ok := p.fromRef(sec, nsec)
	if !ok || d > maxAhead {
		return time.Time{}, false
	}
	if d < -truncated {
		if d < -pastTolerance {
			return time.Time{}, false
		}
		d = 0
	}
	return p.now.Add(d), true
}

// resetAt reads one reset value in any of the forms ParseHeaders documents.
func (p *parser) resetAt(s string) (time.Time, bool) {
	if ip, ns, ok := parseDecimal(s); ok {
		return p.resetNumber(ip, ns)
	}
	if t, ok := parseTimestamp(s, &p.std); ok {
		return p.absolute(t)
	}
	if d, ok := parseGoDuration(s, &p.std); ok && d <= maxAhead {
		return p.after(d), true
	}
	return time.Time{}, false
}

// resetNumber classifies a bare reset number by magnitude.
func (p *parser) resetNumber(ip uint64, ns int64) (time.Time, bool) {
	ref := p.refSec()
	window := int64(epochWindow / time.Second)
	near := func(sec uint64) bool {
		if sec > math.MaxInt64/2 {
			return false
		}
		d := int64(sec) - ref
		return d > -window && d < window
	}
	switch {
	case near(ip / 1000):
		return p.absoluteUnix(int64(ip/1000), int64(ip%1000)*1e6+ns/1e3)
	case near(ip):
		return p.absoluteUnix(int64(ip), ns)
	case ip > uint64(maxAhead/time.Second):
		// Neither an epoch near now nor a plausible delta: near a clock
		// far off, maybe.
		return time.Time{}, false
	default:
		d, ok := delay(ip, ns, time.Second)
		return p.after(d), ok
	}
}

// latestReset reads every element of a reset header and returns the latest.
func (p *parser) latestReset(vals []string) (time.Time, bool) {
	if len(vals) == 0 {
		return time.Time{}, false
	}
	if len(vals) == 1 {
		s := trimOWS(vals[0])
		// The usual case, a number, without the list's iterator: 5% of
		// BenchmarkParseHeadersGitHub.
		if ip, ns, ok := parseDecimal(s); ok {
			return p.resetNumber(ip, ns)
		}
		if strings.IndexByte(s, ',') < 0 {
			return p.resetAt(s)
		}
	}
	var latest time.Time
	found := false
	for e := (elems{vals: vals}); ; {
		s, ok := e.next()
		if !ok {
			break
		}
		if t, ok := p.resetAt(s); ok && (!found || t.After(latest)) {
			latest, found = t, true
		}
	}
	return latest, found
}

// longestDelay reads every element of a header holding a plain delay in
// unit (Discord's X-RateLimit-Reset-After in seconds, retry-after-ms in
// milliseconds, HubSpot's interval) and returns the longest of those no
// longer than limit.
func longestDelay(vals []string, unit, limit time.Duration) (time.Duration, bool) {
	if len(vals) == 0 {
		return 0, false
	}
	var longest time.Duration
	found := false
	for e := (elems{vals: vals}); ; {
		s, ok := e.next()
		if !ok {
			break
		}
		ip, ns, ok := parseDecimal(s)
		if !ok {
			continue
		}
		d, ok := scaleDuration(ip, ns, unit)
		if ok && d <= limit && (!found || d > longest) {
			longest, found = d, true
		}
	}
	return longest, found
}

// retryAfter reads Retry-After (RFC 9110 §10.2.3), X-RateLimit-Retry-After
// (MailerLite) and retry-after-ms (OpenAI, Azure OpenAI).
func (p *parser) retryAfter() time.Duration {
	if d, ok := longestDelay(p.get(fRetryAfterMs), time.Millisecond, maxAhead); ok {
		return d
	}
	if d, ok := p.retryIn(); ok {
		return d
	}
	var longest time.Duration
	for _, vals := range [...][]string{p.get(fRetryAfter), p.get(fXRetryAfter)} {
		for e := (elems{vals: vals}); ; {
			s, ok := e.next()
			if !ok {
				break
			}
			var d time.Duration
			if ip, ns, ok := parseDecimal(s); ok {
				if d, ok = delay(ip, ns, time.Second); !ok {
					continue
				}
			} else if t, ok := parseHTTPDate(s, &p.std); ok {
				// An HTTP-date is measured against the response's own Date
				// so that skew does not stretch or shrink the wait.
				if d, ok = p.fromRef(t.Unix(), int64(t.Nanosecond())); !ok || d > maxAhead {
					continue
				}
			}
			longest = max(longest, d)
		}
	}
	return longest
}

// retryIn reads Traefik's X-Retry-In, the wait as a Go duration
// ("312.5ms"): its Retry-After is that wait rounded up to the second. The
// longest of its values wins.
func (p *parser) retryIn() (time.Duration, bool) {
	var longest time.Duration
	found := false
	for e := (elems{vals: p.get(fRetryIn)}); ; {
		s, ok := e.next()
		if !ok {
			return longest, found
		}
		if d, ok := parseGoDuration(s, &p.std); ok && d <= maxAhead {
			longest, found = max(longest, d), true
		}
	}
}
