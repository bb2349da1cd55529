package throttle

import (
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Regression cases for faults found in review, each failing on the code
// before its fix. They seed FuzzParseHeaders with the other tables.

func TestParseHeadersRegressions(t *testing.T) { runHeaderTests(t, regressionTests()) }

const docGoDates = "Go's time.RFC1123 (UTC) and time.RFC1123Z (numeric zone), sent by real servers though RFC 9110 §5.6.7 defines GMT only"

// zoned formats testNow+d in layout in the zone offset seconds east of UTC.
func zoned(d time.Duration, layout string, offset int) string {
	return testNow.Add(d).In(time.FixedZone("", offset)).Format(layout)
}

// tenYears is the furthest a reset or Retry-After may lie: maxAhead.
const tenYears = 10 * 365 * 24 * time.Hour

func regressionTests() []headerTest {
	ra := func(d time.Duration) Quota { return unknownQuota().with(func(q *Quota) { q.RetryAfter = d }) }
	reset := func(d time.Duration) Quota { return unknownQuota().with(func(q *Quota) { q.Reset = at(d) }) }
	named := func(q Quota) Quota { q.Policy = "requests"; return q }
	return []headerTest{
		// Dates ending in UTC or a numeric zone.
		{"reset RFC1123 UTC", docGoDates, hdr("X-RateLimit-Reset", zoned(time.Minute, time.RFC1123, 0)), reset(time.Minute)},
		{"reset RFC1123Z +0000", docGoDates, hdr("X-RateLimit-Reset", zoned(time.Minute, time.RFC1123Z, 0)), reset(time.Minute)},
		{"reset RFC1123Z -0700", docGoDates, hdr("X-RateLimit-Reset", zoned(time.Minute, time.RFC1123Z, -7*3600)), reset(time.Minute)},
		{"reset RFC1123Z +0530", docGoDates, hdr("X-RateLimit-Reset", zoned(time.Minute, time.RFC1123Z, 5*3600+30*60)), reset(time.Minute)},
		{"RateLimit-ResetTime RFC1123 UTC", docGoDates, hdr("RateLimit-ResetTime", zoned(time.Minute, time.RFC1123, 0)), reset(time.Minute)},
		{"X-Rate-Limit-Reset RFC1123Z", docGoDates, hdr("X-Rate-Limit-Reset", zoned(time.Minute, time.RFC1123Z, 3600)), reset(time.Minute)},
		{"reset RFC1123 UTC against Date", docGoDates, hdr("Date", dateAt(time.Hour), "X-RateLimit-Reset", zoned(time.Hour+time.Minute, time.RFC1123, 0)), reset(time.Minute)},
		{"Date RFC1123 UTC anchors", docGoDates, hdr("Date", zoned(time.Hour, time.RFC1123, 0), "X-RateLimit-Reset", epoch(time.Hour+time.Minute)), reset(time.Minute)},
		{"Date RFC1123Z anchors", docGoDates, hdr("Date", zoned(time.Hour, time.RFC1123Z, -5*3600), "X-RateLimit-Reset", epoch(time.Hour+time.Minute)), reset(time.Minute)},
		{"Retry-After RFC1123 UTC", docGoDates, hdr("Date", dateAt(0), "Retry-After", zoned(time.Minute, time.RFC1123, 0)), ra(time.Minute)},
		{"Retry-After RFC1123Z +0000", docGoDates, hdr("Date", dateAt(0), "Retry-After", zoned(time.Minute, time.RFC1123Z, 0)), ra(time.Minute)},
		{"Retry-After RFC1123Z -0700", docGoDates, hdr("Date", dateAt(0), "Retry-After", zoned(time.Minute, time.RFC1123Z, -7*3600)), ra(time.Minute)},
		{"Retry-After RFC1123Z without Date", docGoDates, hdr("Retry-After", zoned(2*time.Minute, time.RFC1123Z, 2*3600)), ra(2 * time.Minute)},
		{"Retry-After zone hour 24", docNone, hdr("Retry-After", "Sat, 01 Jun 2024 12:01:00 +2400"), unknownQuota()},
		{"Retry-After zone minute 60", docNone, hdr("Retry-After", "Sat, 01 Jun 2024 12:01:00 +0060"), unknownQuota()},
		{"Retry-After zone without sign", docNone, hdr("Retry-After", "Sat, 01 Jun 2024 12:01:00 00000"), unknownQuota()},
		{"Retry-After zone PST", docNone, hdr("Retry-After", "Sat, 01 Jun 2024 12:01:00 PST"), unknownQuota()},

		// One ten-year rule for every form of a reset or Retry-After.
		{"Go duration reset of ten years", docOpenAI, hdr("x-ratelimit-reset-requests", "87600h"), named(reset(tenYears))},
		{"Go duration reset past ten years", docNone, hdr("x-ratelimit-reset-requests", "87600h1s"), unknownQuota()},
		{"Go duration reset 2562047h", docNone, hdr("x-ratelimit-reset-requests", "2562047h"), unknownQuota()},
		{"Go duration reset in days past ten years", docNone, hdr("x-ratelimit-reset-requests", "3651d"), unknownQuota()},
		{"Go duration reset 3650d1ns", docNone, hdr("x-ratelimit-reset-requests", "3650d1ns"), unknownQuota()},
		{"delta seconds reset of ten years", docReddit, hdr("X-RateLimit-Reset", "315360000"), reset(tenYears)},
		{"delta seconds reset past ten years", docNone, hdr("X-RateLimit-Reset", "315360000.5"), unknownQuota()},
		{"Reset-After past ten years", docNone, hdr("X-RateLimit-Reset-After", "315360001"), unknownQuota()},
		{"Reset-After past ten years falls back to Reset", docDiscord, hdr("X-RateLimit-Reset-After", "315360001", "X-RateLimit-Reset", "30"), reset(30 * time.Second)},
		{"IETF t past ten years", docDraft11, hdr("RateLimit", `"a";r=1;t=315360001`), lq(none, 1).with(func(q *Quota) { q.Policy = "a" })},
		{"IETF t of ten years", docDraft11, hdr("RateLimit", `"a";r=1;t=315360000`), lq(none, 1).with(func(q *Quota) { q.Policy = "a"; q.Reset = at(tenYears) })},
		{"RFC 3339 reset past ten years", docNone, hdr("anthropic-ratelimit-requests-reset", testNow.Add(tenYears+time.Second).Format(time.RFC3339)), unknownQuota()},
		{"RFC 3339 reset of ten years", docAnthropic, hdr("anthropic-ratelimit-requests-reset", testNow.Add(tenYears).Format(time.RFC3339)), named(reset(tenYears))},
		{"HTTP-date reset past ten years", docNone, hdr("Date", dateAt(0), "X-RateLimit-Reset", dateAt(tenYears+time.Second)), unknownQuota()},
		{"Retry-After of ten years", docRFC9110, hdr("Retry-After", "315360000"), ra(tenYears)},
		{"Retry-After past ten years", docNone, hdr("Retry-After", "315360001"), unknownQuota()},
		{"Retry-After past ten years, another element stated", docNone, hdr("Retry-After", "315360001, 5"), ra(5 * time.Second)},
		{"Retry-After date past ten years", docNone, hdr("Date", dateAt(0), "Retry-After", dateAt(tenYears+time.Second)), unknownQuota()},
		{"Retry-After date of ten years", docRFC9110, hdr("Date", dateAt(0), "Retry-After", dateAt(tenYears)), ra(tenYears)},
		{"retry-after-ms past ten years falls back", docAzure, hdr("Retry-After-Ms", "315360000001", "Retry-After", "2"), ra(2 * time.Second)},
		{"retry-after-ms of ten years", docAzure, hdr("Retry-After-Ms", "315360000000"), ra(tenYears)},
		{"X-RateLimit-Retry-After past ten years", docNone, hdr("X-RateLimit-Retry-After", "315360001"), unknownQuota()},
	}
}

// TestZonedUnix checks the zoned IMF-fixdate reader against time.Parse.
func TestZonedUnix(t *testing.T) {
	for _, offset := range []int{0, 3600, -7 * 3600, 5*3600 + 30*60, -(9*3600 + 30*60), 14 * 3600, -12 * 3600} {
		for _, when := range []time.Time{testNow, time.Date(2000, 2, 29, 23, 59, 59, 0, time.UTC), time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)} {
			for _, layout := range []string{time.RFC1123, time.RFC1123Z} {
				if layout == time.RFC1123 && offset != 0 {
					continue // RFC1123 names the zone; only UTC is read
				}
				s := when.In(time.FixedZone("", offset)).Format(layout)
				if layout == time.RFC1123 {
					s = when.UTC().Format(layout)
				}
				got, ok := parseHTTPDate(s, new(stdBudget))
				if !ok || !got.Equal(when) {
					t.Errorf("parseHTTPDate(%q) = %v, %v, want %v, true", s, got, ok, when)
				}
			}
		}
	}
}

// spellings returns a header holding name under n spellings that differ in
// the case of their letters, each with the value value(i).
func spellings(name string, n int, value func(i int) string) http.Header {
	h := http.Header{"Content-Type": {"application/json"}}
	for i := range n {
		b := []byte(strings.ToLower(name))
		bit := 0
		for j := range b {
			if isAlpha(b[j]) {
				if i>>bit&1 != 0 {
					b[j] -= 'a' - 'A'
				}
				bit++
			}
		}
		h[string(b)] = []string{value(i)}
	}
	return h
}

// TestParseHeadersManySpellings: a hand-built map holding one header under
// thousands of spellings costs time and memory linear in its size (it cost
// 8.8 s and 5.6 GB for 16,384 spellings), and every spelling is read.
func TestParseHeadersManySpellings(t *testing.T) {
	const n = 4096
	h := spellings("X-RateLimit-Remaining", n, func(i int) string { return strconv.Itoa(n + i) })
	h["X-Ratelimit-Limit"] = []string{"100000"}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := ParseHeaders(h, testNow)
	runtime.ReadMemStats(&after)
	if want := lq(100000, n); !quotaEqual(got, want) {
		t.Errorf("ParseHeaders(%d spellings) = %+v, want %+v", n, got, want)
	}
	// The keys sorted for a deterministic join, and the joined values: a
	// few dozen bytes a spelling.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256*n {
		t.Errorf("ParseHeaders(%d spellings) allocated %d bytes, want at most %d", n, alloc, 256*n)
	}
	qs := ParseQuotas(h, testNow)
	if len(qs) != 1 || !quotaEqual(qs[0], got) {
		t.Errorf("ParseQuotas(%d spellings) = %+v, want [%+v]", n, qs, got)
	}
}

// TestParseHeadersLongNonDates: a long value that is no date, in a field
// that may hold one, costs no allocation in proportion to its size (a
// 4 MiB one cost 25 MB through time.Parse's errors), whether it is one
// value, a list of short ones or many field lines.
func TestParseHeadersLongNonDates(t *testing.T) {
	const size = 4 << 20
	long := "Z" + strings.Repeat("z", size)
	list := strings.Repeat("Zzzzzzzzzzzzzzzzzzzzzzzzzzzzz, ", size/32)
	lines := strings.Split(strings.Repeat("Zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\n", size/32), "\n")
	tests := []struct {
		name string
		h    http.Header
		want Quota
	}{
		{"reset", hdr("X-RateLimit-Reset", long), unknownQuota()},
		{"reset list", hdr("X-RateLimit-Reset", list), unknownQuota()},
		{"reset lines", http.Header{"X-Ratelimit-Reset": lines}, unknownQuota()},
		{"RFC 3339-like reset", hdr("Anthropic-Ratelimit-Requests-Reset", "2024-06-01T12:00:00"+long), unknownQuota()},
		{"RFC 3339-like reset list", hdr("Anthropic-Ratelimit-Requests-Reset", strings.Repeat("2024-06-01T12:00:00Zz, ", size/23)), unknownQuota()},
		{"Go-duration-like reset", hdr("X-Ratelimit-Reset-Requests", "1"+long), unknownQuota()},
		{"Go-duration-like reset list", hdr("X-Ratelimit-Reset-Requests", strings.Repeat("1zzzzzzzzzzzzzzzzzzzzs, ", size/24)), unknownQuota()},
		{"JavaScript-like date", hdr("Retry-After", "Tue Feb 16 2021 09:02:42 GMT+0100"+long), unknownQuota()},
		{"Retry-After", hdr("Retry-After", long), unknownQuota()},
		{"Retry-After list", hdr("Retry-After", list), unknownQuota()},
		{"Date lines", http.Header{"Date": lines, "X-Ratelimit-Reset": {epoch(time.Minute)}},
			unknownQuota().with(func(q *Quota) { q.Reset = at(time.Minute) })},
		{"a date after many non-dates", hdr("Retry-After", list+zoned(time.Minute, time.RFC1123Z, 0)),
			unknownQuota().with(func(q *Quota) { q.RetryAfter = time.Minute })},
	}
	for _, tt := range tests {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got := ParseHeaders(tt.h, testNow)
		runtime.ReadMemStats(&after)
		if !quotaEqual(got, tt.want) {
			t.Errorf("ParseHeaders(%s) = %+v, want %+v", tt.name, got, tt.want)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<10 {
			t.Errorf("ParseHeaders(%s of %d bytes) allocated %d bytes, want at most %d", tt.name, size, alloc, 64<<10)
		}
	}
}
