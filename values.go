package throttle

import (
	"math"
	"net/http"
	"strings"
	"time"
)

// singleCount reads the usual case of a count header, a single value with no
// list: its count, or -1. It reports false for any other case.
func singleCount(vals []string) (float64, bool) {
	if len(vals) != 1 {
		return 0, false
	}
	s := trimOWS(vals[0])
	if v, ok := parseCount(s); ok {
		return v, true // a number has no comma: no need to look for one first
	}
	if strings.IndexByte(s, ',') >= 0 {
		return 0, false
	}
	return notStated, true
}

// leastCount returns the least count among a header's elements, or -1.
func leastCount(vals []string) float64 { return foldCount(vals, leastStated) }

// greatestCount returns the greatest count among a header's elements, or -1:
// the conservative reading of a "used" count.
func greatestCount(vals []string) float64 {
	return foldCount(vals, func(a, b float64) float64 { return max(a, b) })
}

// foldCount combines the counts among a header's elements with pick, from
// -1; a single value skips the list parse.
func foldCount(vals []string, pick func(a, b float64) float64) float64 {
	if v, ok := singleCount(vals); ok { // 4% of BenchmarkParseHeadersGitHub
		return v
	}
	acc := float64(notStated)
	for e := (elems{vals: vals}); ; {
		s, ok := e.next()
		if !ok {
			return acc
		}
		if v, ok := parseCount(s); ok {
			acc = pick(acc, v)
		}
	}
}

// leastStated returns the lesser of two counts, either of which may be -1.
func leastStated(a, b float64) float64 {
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	}
	return min(a, b)
}

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// firstValue returns the first non-empty field line, trimmed.
func firstValue(vals []string) string {
	for _, v := range vals {
		if v = trimOWS(v); v != "" {
			return v
		}
	}
	return ""
}

// parseDecimal parses a strict non-negative decimal: ASCII digits with an
// optional fraction, at most 18 integer digits. It returns the integer part
// and the fraction in nanoseconds (digits past the ninth are ignored).
func parseDecimal(s string) (ip uint64, ns int64, ok bool) {
	i, end := 0, min(len(s), 19)
	for ; i < end; i++ {
		d := s[i] - '0'
		if d > 9 {
			break
		}
		ip = ip*10 + uint64(d)
	}
	if i == 0 || i == 19 { // no digits, or more than 18
		return 0, 0, false
	}
	if i == len(s) {
		return ip, 0, true
	}
	if s[i] != '.' || i+1 == len(s) {
		return 0, 0, false
	}
	scale := int64(1e8)
	for i++; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, 0, false
		}
		ns += int64(s[i]-'0') * scale
		scale /= 10
	}
	return ip, ns, true
}

// parseCount parses a strict count (see parseDecimal).
func parseCount(s string) (float64, bool) {
	ip, ns, ok := parseDecimal(s)
	if !ok {
		return 0, false
	}
	return float64(ip) + float64(ns)/1e9, true
}

// delay returns ip.ns units as a wait, or false when it overflows or lies
// beyond maxAhead.
func delay(ip uint64, ns int64, unit time.Duration) (time.Duration, bool) {
	d, ok := scaleDuration(ip, ns, unit)
	return d, ok && d <= maxAhead
}

// scaleDuration returns ip.ns units as a Duration, or false on overflow.
func scaleDuration(ip uint64, ns int64, unit time.Duration) (time.Duration, bool) {
	if ip > uint64(math.MaxInt64/unit)-1 {
		return 0, false
	}
	return time.Duration(ip)*unit + time.Duration(ns*int64(unit)/1e9), true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isAlpha(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// A stdBudget bounds what one response hands to the standard library's
// time parsers (time.Parse, http.ParseTime, time.ParseDuration), whose
// errors allocate several times the value they refuse: a 4 MiB non-date
// cost 25 MB. They see no value longer than maxStdLen bytes (no date or
// duration a server sends is longer), and nothing once maxStdRefusals calls
// failed; the forms read without them (numbers, the IMF-fixdate and its
// zoned variants) are read regardless.
type stdBudget struct{ refused int }

const (
	maxStdLen      = 40
	maxStdRefusals = 16
)

// allows reports whether s may be handed to a standard-library parser.
func (b *stdBudget) allows(s string) bool {
	return len(s) <= maxStdLen && b.refused < maxStdRefusals
}

// ok records the outcome of a standard-library parse and reports success.
func (b *stdBudget) ok(err error) bool {
	if err != nil {
		b.refused++
	}
	return err == nil
}

// parseGoDuration reads a reset in time.Duration syntax as OpenAI sends it
// ("6m0s", "12ms", "7.66s"), optionally led by whole days ("1d2h"). Signs
// and fractions without a leading digit are rejected.
func parseGoDuration(s string, b *stdBudget) (time.Duration, bool) {
	if s == "" || !isDigit(s[0]) || !isAlpha(s[len(s)-1]) || !b.allows(s) || strings.ContainsAny(s, "+-") {
		return 0, false
	}
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		ip, ns, ok := parseDecimal(s[:i])
		if !ok || ns != 0 || ip > uint64(maxAhead/(24*time.Hour)) {
			return 0, false
		}
		days = time.Duration(ip) * 24 * time.Hour
		if s = s[i+1:]; s == "" {
			return days, true
		}
		if !isDigit(s[0]) {
			return 0, false
		}
	}
	d, err := time.ParseDuration(s)
	if !b.ok(err) || d < 0 || d > math.MaxInt64-days {
		return 0, false
	}
	return days + d, true
}

// parseTimestamp reads an absolute reset: RFC 3339 (Anthropic), ISO 8601
// with minute precision (Jira: 2024-01-01T10:00Z) or an HTTP-date.
func parseTimestamp(s string, b *stdBudget) (time.Time, bool) {
	if len(s) >= 16 && s[4] == '-' && isDigit(s[0]) {
		for _, layout := range [...]string{time.RFC3339, "2006-01-02T15:04Z07:00", "2006-01-02 15:04:05Z07:00"} {
			if !b.allows(s) {
				break
			}
			if t, err := time.Parse(layout, s); b.ok(err) {
				return t, true
			}
		}
		return time.Time{}, false
	}
	return parseHTTPDate(s, b)
}

// parseHTTPDate reads an HTTP-date (RFC 9110 §5.6.7). The preferred
// IMF-fixdate is parsed without allocating, as is its layout with another
// zone (see zonedUnix); the obsolete RFC 850 and ANSI C forms go to
// http.ParseTime, and the JavaScript Date.toString form some APIs send
// ("Tue Feb 16 2021 09:02:42 GMT+0100 (CET)", Lemlist) is read too.
func parseHTTPDate(s string, b *stdBudget) (time.Time, bool) {
	if t, ok := parseIMFFixdate(s); ok {
		return t, true
	}
	if sec, ok := zonedUnix(s); ok {
		return time.Unix(sec, 0).UTC(), true
	}
	if len(s) < 20 || !isAlpha(s[0]) {
		return time.Time{}, false
	}
	// The JavaScript form ends in a zone name of any length: its date is
	// read up to the offset after GMT.
	if i := strings.Index(s[:min(len(s), maxStdLen)], " GMT"); i > 0 && i+9 <= len(s) && (s[i+4] == '+' || s[i+4] == '-') {
		if js := s[:i+9]; b.allows(js) {
			t, err := time.Parse("Mon Jan 02 2006 15:04:05 GMT-0700", js)
			if b.ok(err) {
				return t, true
			}
		}
	}
	if !b.allows(s) {
		return time.Time{}, false
	}
	t, err := http.ParseTime(s)
	return t, b.ok(err)
}

// monthIndex returns the month a three-letter abbreviation names, from 0,
// or -1.
func monthIndex(s string) int {
	switch s {
	case "Jan":
		return 0
	case "Feb":
		return 1
	case "Mar":
		return 2
	case "Apr":
		return 3
	case "May":
		return 4
	case "Jun":
		return 5
	case "Jul":
		return 6
	case "Aug":
		return 7
	case "Sep":
		return 8
	case "Oct":
		return 9
	case "Nov":
		return 10
	case "Dec":
		return 11
	}
	return -1
}

func isDayAbbrev(s string) bool {
	switch s {
	case "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun":
		return true
	}
	return false
}

// parseIMFFixdate parses "Sun, 06 Nov 1994 08:49:37 GMT" exactly.
func parseIMFFixdate(s string) (time.Time, bool) {
	sec, ok := imfUnix(s)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(sec, 0).UTC(), true
}

// imfUnix reads an IMF-fixdate as Unix seconds. A leap second (:60, which
// RFC 9110 §5.6.7 allows) reads as the second after.
func imfUnix(s string) (int64, bool) {
	if len(s) != 29 || s[25:] != " GMT" {
		return 0, false
	}
	return fixdateUnix(s[:25])
}

// zonedUnix reads, as Unix seconds, the IMF-fixdate layout with a zone
// other than GMT: "UTC" (what Go's time.RFC1123 writes) or a numeric offset
// such as "+0000" or "-0700" (time.RFC1123Z, RFC 5322 §3.3). RFC 9110
// §5.6.7 defines GMT alone, but real servers send these in Date, in
// Retry-After and in resets.
func zonedUnix(s string) (int64, bool) {
	switch {
	case len(s) == 29 && s[25:] == " UTC":
		return fixdateUnix(s[:25])
	case len(s) == 31 && s[25] == ' ' && (s[26] == '+' || s[26] == '-'):
		hh, mm := twoDigits(s, 27), twoDigits(s, 29)
		if hh < 0 || mm < 0 || hh > 23 || mm > 59 {
			return 0, false
		}
		sec, ok := fixdateUnix(s[:25])
		offset := int64(hh*3600 + mm*60)
		if s[26] == '+' {
			offset = -offset // east of Greenwich: UTC is earlier
		}
		return sec + offset, ok
	}
	return 0, false
}

// fixdateUnix reads "Sun, 06 Nov 1994 08:49:37", the IMF-fixdate without
// its zone, as Unix seconds in UTC.
func fixdateUnix(s string) (int64, bool) {
	if len(s) != 25 || s[3] != ',' || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' ||
		s[16] != ' ' || s[19] != ':' || s[22] != ':' || !isDayAbbrev(s[:3]) {
		return 0, false
	}
	m := monthIndex(s[8:11])
	day, c, yl := twoDigits(s, 5), twoDigits(s, 12), twoDigits(s, 14)
	hour, minute, sec := twoDigits(s, 17), twoDigits(s, 20), twoDigits(s, 23)
	if m < 0 || day < 0 || c < 0 || yl < 0 || hour < 0 || minute < 0 || sec < 0 ||
		hour > 23 || minute > 59 || sec > 60 {
		return 0, false
	}
	year := c*100 + yl
	if day < 1 || day > daysIn(m+1, year) {
		return 0, false // 31 Feb
	}
	return daysSinceEpoch(year, m+1, day)*86400 + int64(hour*3600+minute*60+sec), true
}

// twoDigits returns the number s[i:i+2] spells, or -1 if it is not two
// ASCII digits.
func twoDigits(s string, i int) int {
	a, b := int(s[i])-'0', int(s[i+1])-'0'
	if uint(a) > 9 || uint(b) > 9 {
		return -1
	}
	return a*10 + b
}

// daysSinceEpoch returns the number of days from 1970-01-01 to the given
// Gregorian date (month 1 to 12, day 1 to 31), without time.Date's
// normalisation: the days_from_civil algorithm of H. Hinnant.
func daysSinceEpoch(year, month, day int) int64 {
	y := int64(year)
	if month <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400                                    // [0, 399]
	doy := (153*int64((month+9)%12)+2)/5 + int64(day) - 1 // [0, 365], from 1 March
	doe := yoe*365 + yoe/4 - yoe/100 + doy                // [0, 146096]
	return era*146097 + doe - 719468
}

// daysIn returns the number of days in month (1 to 12) of year, Gregorian.
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// trimOWS removes optional whitespace (RFC 9110 §5.6.3) around s.
func trimOWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// elems iterates the comma-separated elements of a header's field lines
// (RFC 9110 §5.3), trimmed, skipping empty ones. A comma right after a lone
// day name ("Wed," "Sunday,") belongs to an HTTP-date and does not split.
type elems struct {
	vals []string
	cur  string
	more bool // cur holds unread text
}

func (e *elems) next() (string, bool) {
	for {
		for !e.more {
			if len(e.vals) == 0 {
				return "", false
			}
			e.cur, e.vals, e.more = e.vals[0], e.vals[1:], true
		}
		s, from := e.cur, 0
		var el string
		for {
			j := strings.IndexByte(s[from:], ',')
			if j < 0 {
				el, e.more = s, false
				break
			}
			j += from
			if isDayName(trimOWS(s[:j])) {
				from = j + 1
				continue
			}
			el, e.cur = s[:j], s[j+1:]
			break
		}
		if el = trimOWS(el); el != "" {
			return el, true
		}
	}
}

func isDayName(s string) bool {
	if len(s) < 3 || len(s) > 9 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlpha(s[i]) {
			return false
		}
	}
	return true
}
