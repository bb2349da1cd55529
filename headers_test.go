package throttle

import (
	"fmt"
	"go/ast"
	"go/doc/comment"
	goparser "go/parser"
	"go/token"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-throttle/throttle/internal/sfv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testNow is the client's clock when every test response arrived.
var testNow = time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)

const none = notStated

// dateAt returns the Date header of a server whose clock reads testNow+d.
func dateAt(d time.Duration) string { return testNow.Add(d).Format(http.TimeFormat) }

// epoch returns testNow+d in Unix seconds; epochMs in Unix milliseconds.
func epoch(d time.Duration) string   { return strconv.FormatInt(testNow.Add(d).Unix(), 10) }
func epochMs(d time.Duration) string { return strconv.FormatInt(testNow.Add(d).UnixMilli(), 10) }

// at returns testNow+d: a Reset on the client's clock.
func at(d time.Duration) time.Time { return testNow.Add(d) }

// hdr builds a header with Add, which canonicalizes names.
func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// raw builds a header map by hand, keeping names as written (lower-case
// HTTP/2 captures, say).
func raw(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h[kv[i]] = append(h[kv[i]], kv[i+1])
	}
	return h
}

// lq builds the usual want: limit and remaining.
func lq(limit, remaining float64) Quota { return Quota{Limit: limit, Remaining: remaining} }

func (q Quota) with(f func(*Quota)) Quota { f(&q); return q }

type headerTest struct {
	name string
	doc  string // the documentation the row follows
	h    http.Header
	want Quota
}

// quotaEqual compares quotas, times by instant.
func quotaEqual(a, b Quota) bool {
	return a.Limit == b.Limit && a.Remaining == b.Remaining && a.Reset.Equal(b.Reset) &&
		a.RetryAfter == b.RetryAfter && a.Window == b.Window && a.Policy == b.Policy && a.Unit == b.Unit && a.Scope == b.Scope
}

func runHeaderTests(t *testing.T, tests []headerTest) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ParseHeaders(tt.h, testNow)
			assert.Truef(t, quotaEqual(got, tt.want), "ParseHeaders(%q) = %+v, want %+v (%s)", tt.h, got, tt.want, tt.doc)
			checkInvariants(t, tt.h, testNow)
		})
	}
}

const (
	docGitHub     = "https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api"
	docRFC9110    = "RFC 9110 §10.2.3 Retry-After, §5.6.7 HTTP-date"
	docDiscord    = "https://discord.com/developers/docs/topics/rate-limits#header-format"
	docReddit     = "https://github.com/reddit-archive/reddit/wiki/API (Rules)"
	docJira       = "https://developer.atlassian.com/cloud/jira/platform/rate-limiting/"
	docX          = "https://docs.x.com/x-api/fundamentals/rate-limits"
	docOkta       = "https://developer.okta.com/docs/reference/rl-best-practices/"
	docZendesk    = "https://developer.zendesk.com/api-reference/introduction/rate-limits/"
	docKong       = "https://developer.konghq.com/plugins/rate-limiting/ (headers sent to the client)"
	docSpring     = "https://docs.spring.io/spring-cloud-gateway/reference/spring-cloud-gateway-server-webflux/gatewayfilter-factories/requestratelimiter-factory.html"
	docAtlassian  = "https://confluence.atlassian.com/adminjiraserver/improving-instance-stability-with-rate-limiting-983794911.html"
	docBucket4j   = "https://github.com/MarcGiffing/bucket4j-spring-boot-starter (X-Rate-Limit-Retry-After-Seconds)"
	docTraefik    = "https://doc.traefik.io/traefik/middlewares/http/ratelimit/ (X-Retry-In beside Retry-After)"
	docDraft01    = "draft-ietf-httpapi-ratelimit-headers-01 §3.1 (RateLimit-Limit list form)"
	docDraft06    = "draft-ietf-httpapi-ratelimit-headers-06 §5"
	docDraft07    = "draft-ietf-httpapi-ratelimit-headers-07 §4, §5"
	docDraft08    = "draft-ietf-httpapi-ratelimit-headers-08 §3, §4 (Token names)"
	docDraft11    = "draft-ietf-httpapi-ratelimit-headers-11 §3, §4"
	docRFC9651    = "RFC 9651 §4.2 (a field that fails to parse is ignored)"
	docGitLab     = "https://docs.gitlab.com/ee/administration/settings/user_and_ip_rate_limits.html#response-headers"
	docOpenAI     = "https://platform.openai.com/docs/guides/rate-limits#rate-limits-in-headers"
	docAzure      = "https://learn.microsoft.com/en-us/azure/ai-services/openai/quotas-limits (retry-after-ms)"
	docAnthropic  = "https://docs.anthropic.com/en/api/rate-limits#response-headers"
	docLinear     = "https://linear.app/developers/rate-limiting"
	docShopify    = "https://shopify.dev/docs/api/usage/rate-limits (REST Admin API)"
	docSforce     = "https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/headers_api_usage.htm"
	docHubSpot    = "https://developers.hubspot.com/docs/guides/apps/api-usage/usage-details"
	docMailerLite = "https://developers-classic.mailerlite.com/docs/api-rate-limits"
	docNone       = "hostile or malformed input"
)

func TestParseHeadersGitHub(t *testing.T) { runHeaderTests(t, githubTests()) }

func githubTests() []headerTest {
	return []headerTest{
		{"typical", docGitHub, hdr(
			"Date", dateAt(0), "X-RateLimit-Limit", "5000", "X-RateLimit-Remaining", "4999",
			"X-RateLimit-Used", "1", "X-RateLimit-Reset", epoch(time.Hour), "X-RateLimit-Resource", "core"),
			Quota{Limit: 5000, Remaining: 4999, Reset: at(time.Hour), Scope: "core"}},
		{"server clock ahead", docGitHub, hdr(
			"Date", dateAt(30*time.Second), "X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "59",
			"X-RateLimit-Reset", epoch(30*time.Second+10*time.Minute)),
			lq(60, 59).with(func(q *Quota) { q.Reset = at(10 * time.Minute) })},
		{"server clock behind", docGitHub, hdr(
			"Date", dateAt(-5*time.Minute), "X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "0",
			"X-RateLimit-Reset", epoch(-5*time.Minute+42*time.Second)),
			lq(60, 0).with(func(q *Quota) { q.Reset = at(42 * time.Second) })},
		{"no Date: client clock", docGitHub, hdr(
			"X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "1", "X-RateLimit-Reset", epoch(time.Minute)),
			lq(60, 1).with(func(q *Quota) { q.Reset = at(time.Minute) })},
		{"garbage Date ignored", docGitHub, hdr(
			"Date", "Mon, 01 Jan 1990 00:00:00 GMT", "X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "1",
			"X-RateLimit-Reset", epoch(time.Minute)),
			lq(60, 1).with(func(q *Quota) { q.Reset = at(time.Minute) })},
		{"unparseable Date ignored", docGitHub, hdr(
			"Date", "yesterday", "X-RateLimit-Reset", epoch(time.Minute)),
			unknownQuota().with(func(q *Quota) { q.Reset = at(time.Minute) })},
		{"reset just before Date means now", docGitHub, hdr(
			"Date", dateAt(0), "X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "0",
			"X-RateLimit-Reset", epoch(-3*time.Second)),
			lq(60, 0).with(func(q *Quota) { q.Reset = testNow })},
		{"reset long past is not stated", docGitHub, hdr(
			"Date", dateAt(0), "X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "0",
			"X-RateLimit-Reset", epoch(-time.Hour)),
			lq(60, 0)},
		{"secondary rate limit", docGitHub, hdr(
			"Date", dateAt(0), "Retry-After", "60", "X-RateLimit-Limit", "5000",
			"X-RateLimit-Remaining", "4000", "X-RateLimit-Reset", epoch(time.Hour), "X-RateLimit-Resource", "core"),
			Quota{Limit: 5000, Remaining: 4000, Reset: at(time.Hour), RetryAfter: time.Minute, Scope: "core"}},
		{"used without remaining", docGitHub, hdr(
			"X-RateLimit-Limit", "30", "X-RateLimit-Used", "12", "X-RateLimit-Resource", "search"),
			Quota{Limit: 30, Remaining: 18, Scope: "search"}},
		{"repeated lines: least limit and remaining, latest reset", docGitHub, hdr(
			"Date", dateAt(0),
			"X-RateLimit-Limit", "5000", "X-RateLimit-Limit", "60",
			"X-RateLimit-Remaining", "10", "X-RateLimit-Remaining", "3",
			"X-RateLimit-Reset", epoch(time.Minute), "X-RateLimit-Reset", epoch(time.Hour)),
			lq(60, 3).with(func(q *Quota) { q.Reset = at(time.Hour) })},
		{"comma-joined values", docGitHub, hdr(
			"X-RateLimit-Limit", "5000, 60", "X-RateLimit-Remaining", "10,3"),
			lq(60, 3)},
		{"lower-case map", docGitHub, raw(
			"date", dateAt(0), "x-ratelimit-limit", "5000", "x-ratelimit-remaining", "4999",
			"x-ratelimit-reset", epoch(time.Hour), "x-ratelimit-resource", "graphql"),
			Quota{Limit: 5000, Remaining: 4999, Reset: at(time.Hour), Scope: "graphql"}},
		{"two spellings of one header", docGitHub, raw(
			"X-Ratelimit-Remaining", "10", "x-ratelimit-remaining", "4"),
			lq(none, 4)},
		{"surrounding whitespace", docGitHub, raw(
			"X-Ratelimit-Limit", " 5000\t", "X-Ratelimit-Remaining", "\t4999 ", "X-Ratelimit-Resource", " core "),
			Quota{Limit: 5000, Remaining: 4999, Scope: "core"}},
		{"remaining above limit is clamped", docGitHub, hdr(
			"X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "100"),
			lq(60, 60)},
	}
}

func TestParseHeadersHostile(t *testing.T) { runHeaderTests(t, hostileTests()) }

func hostileTests() []headerTest {
	limitOnly := func(v string) http.Header {
		return hdr("X-RateLimit-Limit", v, "X-RateLimit-Remaining", v, "X-RateLimit-Reset", v)
	}
	var tests []headerTest
	for _, v := range []string{
		"NaN", "nan", "Infinity", "+Inf", "1e400", "1e3", "-1", "+5", "0x10", "1_000", "", " ", "1.",
		".5", "1.2.3", "5 000", "١٢", strings.Repeat("9", 400), "99999999999999999999",
	} {
		tests = append(tests, headerTest{"count " + strconv.Quote(v), docNone, limitOnly(v), unknownQuota()})
	}
	tests = append(tests, []headerTest{
		{"Retry-After 999999999 (31 years) is not stated", docNone, hdr("Retry-After", "999999999"), unknownQuota()},
		{"Retry-After overflow", docNone, hdr("Retry-After", "99999999999"), unknownQuota()},
		{"Retry-After huge digits", docNone, hdr("Retry-After", strings.Repeat("9", 400)), unknownQuota()},
		{"Retry-After negative", docNone, hdr("Retry-After", "-1"), unknownQuota()},
		{"Retry-After NaN", docNone, hdr("Retry-After", "NaN"), unknownQuota()},
		{"Retry-After 1e400", docNone, hdr("Retry-After", "1e400"), unknownQuota()},
		{"reset far-future epoch ms overflows", docNone, hdr("Date", dateAt(0), "X-RateLimit-Reset", "999999999999999999"), unknownQuota()},
		{"reset negative duration", docNone, hdr("x-ratelimit-reset-requests", "-1s"), unknownQuota()},
		{"reset duration overflow", docNone, hdr("x-ratelimit-reset-requests", "9999999999h"), unknownQuota()},
		{"reset garbage", docNone, hdr("X-RateLimit-Reset", "soon"), unknownQuota()},
		{"reset 0x10", docNone, hdr("X-RateLimit-Reset", "0x10"), unknownQuota()},
		{"Date with 31 Feb", docNone, hdr("Date", "Sat, 31 Feb 2024 12:00:00 GMT", "X-RateLimit-Reset", epoch(time.Minute)),
			unknownQuota().with(func(q *Quota) { q.Reset = at(time.Minute) })},
		{"Shopify garbage", docNone, hdr("X-Shopify-Shop-Api-Call-Limit", "32/-40"), unknownQuota()},
		{"Salesforce garbage", docNone, hdr("Sforce-Limit-Info", "api-usage=NaN/5000"), unknownQuota()},
		{"nothing", docNone, hdr("Content-Type", "application/json"), unknownQuota()},
		{"nil header", docNone, nil, unknownQuota()},
	}...)
	return tests
}

func TestParseHeadersRetryAfter(t *testing.T) { runHeaderTests(t, retryAfterTests()) }

func retryAfterTests() []headerTest {
	ra := func(d time.Duration) Quota { return unknownQuota().with(func(q *Quota) { q.RetryAfter = d }) }
	return []headerTest{
		{"delay-seconds", docRFC9110, hdr("Retry-After", "120"), ra(2 * time.Minute)},
		{"fractional seconds", docShopify, hdr("Retry-After", "2.0"), ra(2 * time.Second)},
		{"IMF-fixdate against Date", docRFC9110, hdr("Date", dateAt(time.Hour), "Retry-After", dateAt(time.Hour+90*time.Second)), ra(90 * time.Second)},
		{"IMF-fixdate without Date", docRFC9110, hdr("Retry-After", dateAt(30*time.Second)), ra(30 * time.Second)},
		{"RFC 850 date", docRFC9110, hdr("Date", dateAt(0), "Retry-After", testNow.Add(time.Minute).Format(time.RFC850)), ra(time.Minute)},
		{"ANSI C date", docRFC9110, hdr("Date", dateAt(0), "Retry-After", testNow.Add(time.Minute).Format(time.ANSIC)), ra(time.Minute)},
		{"JavaScript Date.toString", docNone, hdr("Date", dateAt(0), "Retry-After", "Sat Jun 01 2024 14:01:00 GMT+0200 (CEST)"), ra(time.Minute)},
		{"JavaScript Date.toString, long zone name", docNone, hdr("Date", dateAt(0), "Retry-After", "Sat Jun 01 2024 07:01:00 GMT-0500 (Central Daylight Time in North America)"), ra(time.Minute)},
		{"date in the past", docRFC9110, hdr("Date", dateAt(0), "Retry-After", dateAt(-time.Minute)), unknownQuota()},
		{"repeated: longest", docRFC9110, hdr("Retry-After", "30", "Retry-After", "120"), ra(2 * time.Minute)},
		{"Traefik: X-Retry-In preferred", docTraefik, hdr("Retry-After", "1", "X-Retry-In", "312.5ms"), ra(312500 * time.Microsecond)},
		{"Traefik: X-Retry-In unreadable", docTraefik, hdr("Retry-After", "1", "X-Retry-In", "-3s"), ra(time.Second)},
		{"comma-joined dates: longest", docRFC9110, hdr("Date", dateAt(0), "Retry-After", dateAt(time.Minute)+", "+dateAt(2*time.Minute)), ra(2 * time.Minute)},
		{"retry-after-ms preferred", docAzure, hdr("Retry-After", "2", "Retry-After-Ms", "1500"), ra(1500 * time.Millisecond)},
		{"retry-after-ms garbage falls back", docAzure, hdr("Retry-After", "2", "Retry-After-Ms", "soon"), ra(2 * time.Second)},
		{"X-RateLimit-Retry-After", docMailerLite, hdr("X-RateLimit-Retry-After", "7"), ra(7 * time.Second)},
		{"whitespace", docRFC9110, raw("retry-after", "  5  "), ra(5 * time.Second)},
	}
}

func TestParseHeadersVendors(t *testing.T) { runHeaderTests(t, vendorTests()) }

func vendorTests() []headerTest {
	return []headerTest{
		{"Discord: Reset-After preferred", docDiscord, hdr(
			"Date", dateAt(0), "X-RateLimit-Limit", "5", "X-RateLimit-Remaining", "1",
			"X-RateLimit-Reset", epoch(9*time.Second)+".123", "X-RateLimit-Reset-After", "1.5",
			"X-RateLimit-Bucket", "abcd1234"),
			Quota{Limit: 5, Remaining: 1, Reset: at(1500 * time.Millisecond), Scope: "abcd1234"}},
		{"Discord: float epoch", docDiscord, hdr(
			"Date", dateAt(0), "X-RateLimit-Limit", "5", "X-RateLimit-Remaining", "4",
			"X-RateLimit-Reset", epoch(2*time.Second)+".250"),
			lq(5, 4).with(func(q *Quota) { q.Reset = at(2250 * time.Millisecond) })},
		{"Reddit", docReddit, hdr(
			"X-Ratelimit-Used", "5", "X-Ratelimit-Remaining", "595.0", "X-Ratelimit-Reset", "120"),
			Quota{Limit: 600, Remaining: 595, Reset: at(2 * time.Minute), Window: 10 * time.Minute}},
		{"Jira: minute-precision reset and reason", docJira, hdr(
			"Date", dateAt(0), "X-RateLimit-Limit", "100", "X-RateLimit-Remaining", "0",
			"X-RateLimit-Reset", "2024-06-01T12:05Z", "Retry-After", "300", "RateLimit-Reason", "jira-burst-based"),
			Quota{Limit: 100, Remaining: 0, Reset: at(5 * time.Minute), RetryAfter: 5 * time.Minute, Policy: "jira-burst-based"}},
		{"Jira: truncated reset just passed", docJira, hdr(
			"Date", dateAt(40*time.Second), "X-RateLimit-Reset", "2024-06-01T12:00Z"),
			unknownQuota().with(func(q *Quota) { q.Reset = testNow })},
		{"X", docX, hdr(
			"x-rate-limit-limit", "900", "x-rate-limit-remaining", "899", "x-rate-limit-reset", epoch(15*time.Minute)),
			lq(900, 899).with(func(q *Quota) { q.Reset = at(15 * time.Minute) })},
		{"Okta", docOkta, hdr( // a server clock an hour ahead: resets are placed against its Date
			"Date", dateAt(time.Hour), "X-Rate-Limit-Limit", "600", "X-Rate-Limit-Remaining", "598",
			"X-Rate-Limit-Reset", epoch(time.Hour+time.Minute)),
			lq(600, 598).with(func(q *Quota) { q.Reset = at(time.Minute) })},
		{"Zendesk", docZendesk, hdr("X-Rate-Limit", "700", "X-Rate-Limit-Remaining", "699"), lq(700, 699)},
		{"Kong: the period with the least remaining", docKong, hdr(
			"X-RateLimit-Limit-Second", "5", "X-RateLimit-Remaining-Second", "4",
			"X-RateLimit-Limit-Minute", "100", "X-RateLimit-Remaining-Minute", "2"),
			Quota{Limit: 100, Remaining: 2, Window: time.Minute, Policy: "minute"}},
		{"Kong: a tie goes to the shorter period", docKong, hdr(
			"X-RateLimit-Limit-Hour", "1000", "X-RateLimit-Remaining-Hour", "4",
			"x-ratelimit-limit-second", "5", "x-ratelimit-remaining-second", "4"),
			Quota{Limit: 5, Remaining: 4, Window: time.Second, Policy: "second"}},
		{"Kong: RateLimit-* first, the period fills in its window", docKong, hdr(
			"RateLimit-Limit", "5", "RateLimit-Remaining", "4", "RateLimit-Reset", "47",
			"X-RateLimit-Limit-Minute", "5", "X-RateLimit-Remaining-Minute", "4"),
			Quota{Limit: 5, Remaining: 4, Reset: at(47 * time.Second), Window: time.Minute, Policy: "minute"}},
		{"Kong: a calendar month has no one length", docKong, hdr(
			"X-RateLimit-Limit-Month", "10000", "X-RateLimit-Remaining-Month", "9000"),
			Quota{Limit: 10000, Remaining: 9000, Policy: "month"}},
		{"Kong: a custom unit's period is not the request quota", docKong, hdr(
			"X-RateLimit-Limit-Videos-Minute", "10", "X-RateLimit-Remaining-Videos-Minute", "9"),
			unknownQuota()},
		{"Spring Cloud Gateway: the bucket's refill", docSpring, hdr(
			"X-RateLimit-Remaining", "9", "X-RateLimit-Replenish-Rate", "10",
			"X-RateLimit-Burst-Capacity", "20", "X-RateLimit-Requested-Tokens", "1"),
			Quota{Limit: 20, Remaining: 9, Reset: at(1100 * time.Millisecond), Window: 2 * time.Second}},
		{"Spring Cloud Gateway: a request costs several tokens", docSpring, hdr(
			"X-RateLimit-Remaining", "59", "X-RateLimit-Replenish-Rate", "1",
			"X-RateLimit-Burst-Capacity", "60", "X-RateLimit-Requested-Tokens", "60"),
			Quota{Limit: 1, Remaining: 0, Reset: at(time.Second), Window: time.Minute}},
		{"Spring Cloud Gateway: -1 remaining (Redis down) is not stated", docSpring, hdr(
			"X-RateLimit-Remaining", "-1", "X-RateLimit-Replenish-Rate", "10",
			"X-RateLimit-Burst-Capacity", "20", "X-RateLimit-Requested-Tokens", "1"),
			Quota{Limit: 20, Remaining: -1, Window: 2 * time.Second}},
		{"Spring Cloud Gateway: a rate of 0 says nothing of the refill", docSpring, hdr(
			"X-RateLimit-Remaining", "3", "X-RateLimit-Replenish-Rate", "0", "X-RateLimit-Burst-Capacity", "20"),
			Quota{Limit: -1, Remaining: 3}},
		{"Atlassian Data Center: fill rate per interval", docAtlassian, hdr(
			"X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "30",
			"X-RateLimit-FillRate", "10", "X-RateLimit-Interval-Seconds", "2", "Retry-After", "0"),
			Quota{Limit: 60, Remaining: 30, Reset: at(6 * time.Second), Window: 12 * time.Second}},
		{"Bucket4j", docBucket4j, hdr("X-Rate-Limit-Remaining", "0", "X-Rate-Limit-Retry-After-Seconds", "57"),
			Quota{Limit: -1, Remaining: 0, RetryAfter: 57 * time.Second}},
		{"OpenAI", docOpenAI, hdr(
			"x-ratelimit-limit-requests", "60", "x-ratelimit-limit-tokens", "150000",
			"x-ratelimit-remaining-requests", "59", "x-ratelimit-remaining-tokens", "149984",
			"x-ratelimit-reset-requests", "1s", "x-ratelimit-reset-tokens", "6m0s"),
			Quota{Limit: 60, Remaining: 59, Reset: at(time.Second), Policy: "requests"}},
		{"OpenAI: millisecond reset", docOpenAI, hdr("x-ratelimit-reset-requests", "12ms"),
			unknownQuota().with(func(q *Quota) { q.Reset = at(12 * time.Millisecond); q.Policy = "requests" })},
		{"OpenAI: fractional reset", docOpenAI, hdr("x-ratelimit-reset-requests", "7.66s"),
			unknownQuota().with(func(q *Quota) { q.Reset = at(7660 * time.Millisecond); q.Policy = "requests" })},
		{"OpenAI: compound reset with days", docOpenAI, hdr("x-ratelimit-reset-requests", "1d2h3m"),
			unknownQuota().with(func(q *Quota) { q.Reset = at(26*time.Hour + 3*time.Minute); q.Policy = "requests" })},
		{"Azure: -1 is not stated", docAzure, hdr(
			"x-ratelimit-limit-requests", "-1", "x-ratelimit-remaining-requests", "-1", "retry-after-ms", "250"),
			unknownQuota().with(func(q *Quota) { q.RetryAfter = 250 * time.Millisecond })},
		{"Anthropic", docAnthropic, hdr(
			"Date", dateAt(0),
			"anthropic-ratelimit-requests-limit", "50", "anthropic-ratelimit-requests-remaining", "49",
			"anthropic-ratelimit-requests-reset", "2024-06-01T12:00:30Z",
			"anthropic-ratelimit-tokens-limit", "40000", "anthropic-ratelimit-tokens-remaining", "39000",
			"anthropic-ratelimit-tokens-reset", "2024-06-01T12:00:02Z"),
			Quota{Limit: 50, Remaining: 49, Reset: at(30 * time.Second), Policy: "requests"}},
		{"Anthropic: RFC 3339 with offset and skew", docAnthropic, hdr(
			"Date", dateAt(10*time.Second), "anthropic-ratelimit-requests-reset", "2024-06-01T14:01:10+02:00"),
			unknownQuota().with(func(q *Quota) { q.Reset = at(time.Minute); q.Policy = "requests" })},
		{"Linear: epoch milliseconds", docLinear, hdr(
			"X-RateLimit-Requests-Limit", "1500", "X-RateLimit-Requests-Remaining", "1499",
			"X-RateLimit-Requests-Reset", epochMs(time.Hour+250*time.Millisecond),
			"X-RateLimit-Complexity-Limit", "250000", "X-RateLimit-Complexity-Remaining", "249000"),
			Quota{Limit: 1500, Remaining: 1499, Reset: at(time.Hour + 250*time.Millisecond), Policy: "requests"}},
		{"Shopify", docShopify, hdr("X-Shopify-Shop-Api-Call-Limit", "32/40", "Retry-After", "2.0"),
			Quota{Limit: 40, Remaining: 8, RetryAfter: 2 * time.Second}},
		{"Shopify: over the bucket", docShopify, hdr("X-Shopify-Shop-Api-Call-Limit", "41/40"), lq(40, 0)},
		{"Salesforce", docSforce, hdr("Sforce-Limit-Info", "api-usage=25/5000"),
			Quota{Limit: 5000, Remaining: 4975, Policy: "api-usage"}},
		{"Salesforce: per-app first", docSforce, hdr("Sforce-Limit-Info", "per-app-api-usage=17/250(appName=sample-app), api-usage=25/5000"),
			Quota{Limit: 5000, Remaining: 4975, Policy: "api-usage"}},
		{"HubSpot", docHubSpot, hdr(
			"X-HubSpot-RateLimit-Daily", "250000", "X-HubSpot-RateLimit-Daily-Remaining", "249900",
			"X-HubSpot-RateLimit-Interval-Milliseconds", "10000", "X-HubSpot-RateLimit-Max", "100",
			"X-HubSpot-RateLimit-Remaining", "99", "X-HubSpot-RateLimit-Secondly", "10",
			"X-HubSpot-RateLimit-Secondly-Remaining", "9"),
			Quota{Limit: 100, Remaining: 99, Window: 10 * time.Second}},
		{"HubSpot OAuth: no daily", docHubSpot, hdr(
			"X-HubSpot-RateLimit-Interval-Milliseconds", "10000", "X-HubSpot-RateLimit-Max", "110",
			"X-HubSpot-RateLimit-Remaining", "109"),
			Quota{Limit: 110, Remaining: 109, Window: 10 * time.Second}},
		{"HubSpot daily only", docHubSpot, hdr(
			"X-HubSpot-RateLimit-Daily", "250000", "X-HubSpot-RateLimit-Daily-Remaining", "249900"),
			Quota{Limit: 250000, Remaining: 249900, Window: 24 * time.Hour, Policy: "daily"}},
	}
}

func TestParseHeadersIETF(t *testing.T) { runHeaderTests(t, ietfTests()) }

func ietfTests() []headerTest {
	return []headerTest{
		{"draft-06 fields and policy", docDraft06, hdr(
			"RateLimit-Limit", "100", "RateLimit-Remaining", "50", "RateLimit-Reset", "30",
			"RateLimit-Policy", "100;w=60, 1000;w=3600"),
			Quota{Limit: 100, Remaining: 50, Reset: at(30 * time.Second), Window: time.Minute}},
		{"draft-01 list form", docDraft01, hdr(
			"RateLimit-Limit", "10, 10;w=1, 1000;w=3600", "RateLimit-Remaining", "9", "RateLimit-Reset", "1"),
			Quota{Limit: 10, Remaining: 9, Reset: at(time.Second), Window: time.Second}},
		{"draft-06 lower-case", docDraft06, raw(
			"ratelimit-limit", "300", "ratelimit-remaining", "280", "ratelimit-reset", "53"),
			Quota{Limit: 300, Remaining: 280, Reset: at(53 * time.Second)}},
		{"policy alone", docDraft06, hdr("RateLimit-Policy", "10;w=1;comment=\"x\", 50;w=60"),
			Quota{Limit: 10, Remaining: none, Window: time.Second}},
		{"GitLab", docGitLab, hdr(
			"Date", dateAt(0), "RateLimit-Limit", "600", "RateLimit-Observed", "6", "RateLimit-Remaining", "594",
			"RateLimit-Reset", epoch(37*time.Second), "RateLimit-ResetTime", dateAt(37*time.Second),
			"RateLimit-Name", "throttle_authenticated_api"),
			Quota{Limit: 600, Remaining: 594, Reset: at(37 * time.Second), Policy: "throttle_authenticated_api"}},
		{"GitLab: observed only", docGitLab, hdr(
			"Date", dateAt(0), "RateLimit-Limit", "60", "RateLimit-Observed", "67", "RateLimit-ResetTime", dateAt(time.Minute)),
			Quota{Limit: 60, Remaining: 0, Reset: at(time.Minute)}},
		{"draft-07 dictionary", docDraft07, hdr(
			"RateLimit", "limit=100, remaining=50, reset=5", "RateLimit-Policy", "100;w=60"),
			Quota{Limit: 100, Remaining: 50, Reset: at(5 * time.Second), Window: time.Minute}},
		{"draft-07 malformed dictionary ignored", docRFC9651, hdr(
			"RateLimit", "limit=100, remaining=50,, reset=5", "X-RateLimit-Limit", "7"),
			lq(7, none)},
		{"structured", docDraft11, hdr(
			"RateLimit-Policy", `"burst";q=100;w=60, "daily";q=1000;w=86400`, "RateLimit", `"burst";r=50;t=30`),
			Quota{Limit: 100, Remaining: 50, Reset: at(30 * time.Second), Window: time.Minute, Policy: "burst"}},
		{"structured: least remaining wins", docDraft11, hdr(
			"RateLimit-Policy", `"burst";q=100;w=60, "daily";q=1000;w=86400`,
			"RateLimit", `"burst";r=50;t=30, "daily";r=20;t=3000`),
			Quota{Limit: 1000, Remaining: 20, Reset: at(3000 * time.Second), Window: 24 * time.Hour, Policy: "daily"}},
		{"structured: lines split", docDraft11, hdr(
			"RateLimit-Policy", `"burst";q=100;w=60`, "RateLimit-Policy", `"daily";q=1000;w=86400`,
			"RateLimit", `"daily";r=900;t=3000`, "RateLimit", `"burst";r=5;t=3`),
			Quota{Limit: 100, Remaining: 5, Reset: at(3 * time.Second), Window: time.Minute, Policy: "burst"}},
		{"structured: tokens (draft-08)", docDraft08, hdr(
			"RateLimit-Policy", `burst;q=100;w=60`, "RateLimit", `burst;r=5;t=3`),
			Quota{Limit: 100, Remaining: 5, Reset: at(3 * time.Second), Window: time.Minute, Policy: "burst"}},
		{"structured: unknown parameters and pk ignored", docDraft11, hdr(
			"RateLimit-Policy", `"peruser";q=100;w=60;pk=:cHsdsRa894==:;acme-burst=5`,
			"RateLimit", `"peruser";r=99;t=60;pk=:cHsdsRa894==:;comment="hi \"there\""`),
			Quota{Limit: 100, Remaining: 99, Reset: at(time.Minute), Window: time.Minute, Policy: "peruser"}},
		{"structured: non-request unit skipped", docDraft11, hdr(
			"RateLimit-Policy", `"bytes";q=65535;qu="content-bytes";w=10, "req";q=10;w=1`,
			"RateLimit", `"bytes";r=0;t=10, "req";r=9;t=1`),
			Quota{Limit: 10, Remaining: 9, Reset: at(time.Second), Window: time.Second, Policy: "req"}},
		{"structured: an item that states nothing is passed over", docDraft11, hdr(
			"RateLimit", `"a"`, "RateLimit-Policy", `"b";q=5;w=1`),
			Quota{Limit: 5, Remaining: none, Window: time.Second, Policy: "b"}},
		{"structured: no policy", docDraft11, hdr("RateLimit", `"default";r=50;t=30`),
			Quota{Limit: none, Remaining: 50, Reset: at(30 * time.Second), Policy: "default"}},
		{"structured: policy only", docDraft11, hdr("RateLimit-Policy", `"permin";q=50;w=60,"perhr";q=1000;w=3600`),
			Quota{Limit: 50, Remaining: none, Window: time.Minute, Policy: "permin"}},
		{"structured: whitespace", docDraft11, raw(
			"ratelimit-policy", `  "default";q=100;w=10  `, "ratelimit", "\t\"default\";r=1;t=7 "),
			Quota{Limit: 100, Remaining: 1, Reset: at(7 * time.Second), Window: 10 * time.Second, Policy: "default"}},
		{"structured: trailing comma ignores field", docRFC9651, hdr(
			"RateLimit", `"burst";r=50;t=30,`, "X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "10"),
			lq(60, 10)},
		{"structured: bad line ignores field", docRFC9651, hdr(
			"RateLimit-Policy", `"burst";q=100;w=60`, "RateLimit-Policy", `"daily";q=1000;w=86400 junk`,
			"RateLimit", `"burst";r=5`),
			Quota{Limit: none, Remaining: 5, Policy: "burst"}},
		{"structured: negative and decimal values not stated", docDraft11, hdr(
			"RateLimit-Policy", `"a";q=-100;w=0`, "RateLimit", `"a";r=1.5;t=-3`),
			unknownQuota()},
		{"structured: filled from X-RateLimit when the same quota", docDraft11, hdr(
			"Date", dateAt(0), "RateLimit", `"default";r=50`,
			"X-RateLimit-Limit", "100", "X-RateLimit-Remaining", "50", "X-RateLimit-Reset", epoch(time.Minute)),
			Quota{Limit: 100, Remaining: 50, Reset: at(time.Minute), Policy: "default"}},
		{"structured: not filled from a different quota", docDraft11, hdr(
			"Date", dateAt(0), "RateLimit", `"default";r=50`,
			"X-RateLimit-Limit", "100", "X-RateLimit-Remaining", "70", "X-RateLimit-Reset", epoch(time.Minute)),
			Quota{Limit: none, Remaining: 50, Policy: "default"}},
		{"structured over draft-06 fields", docDraft11, hdr(
			"RateLimit", `"default";r=3;t=2`, "RateLimit-Policy", `"default";q=10;w=2`,
			"RateLimit-Limit", "10", "RateLimit-Remaining", "4", "RateLimit-Reset", "2"),
			Quota{Limit: 10, Remaining: 3, Reset: at(2 * time.Second), Window: 2 * time.Second, Policy: "default"}},
	}
}

// quotasTest is a row of TestParseQuotas.
type quotasTest struct {
	name string
	doc  string
	h    http.Header
	want []Quota
}

func TestParseQuotas(t *testing.T) {
	for _, tt := range quotasTests() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ParseQuotas(tt.h, testNow)
			ok := len(got) == len(tt.want)
			for i := 0; ok && i < len(got); i++ {
				ok = quotaEqual(got[i], tt.want[i])
			}
			assert.Truef(t, ok, "ParseQuotas(%q) = %+v, want %+v (%s)", tt.h, got, tt.want, tt.doc)
			checkInvariants(t, tt.h, testNow)
		})
	}
}

func quotasTests() []quotasTest {
	return []quotasTest{
		{"OpenAI requests and tokens", docOpenAI, hdr(
			"x-ratelimit-limit-requests", "60", "x-ratelimit-limit-tokens", "150000",
			"x-ratelimit-remaining-requests", "59", "x-ratelimit-remaining-tokens", "149984",
			"x-ratelimit-reset-requests", "1s", "x-ratelimit-reset-tokens", "6m0s", "retry-after-ms", "20"),
			[]Quota{
				{Limit: 60, Remaining: 59, Reset: at(time.Second), RetryAfter: 20 * time.Millisecond, Policy: "requests"},
				{Limit: 150000, Remaining: 149984, Reset: at(6 * time.Minute), RetryAfter: 20 * time.Millisecond, Policy: "tokens"},
			}},
		{"Kong: every period", docKong, hdr(
			"X-RateLimit-Limit-Second", "5", "X-RateLimit-Remaining-Second", "4",
			"X-RateLimit-Limit-Minute", "100", "X-RateLimit-Remaining-Minute", "2",
			"X-RateLimit-Limit-Videos-Minute", "10", "X-RateLimit-Remaining-Videos-Minute", "9"),
			[]Quota{
				{Limit: 100, Remaining: 2, Window: time.Minute, Policy: "minute"},
				{Limit: 10, Remaining: 9, Policy: "videos-minute"},
				{Limit: 5, Remaining: 4, Window: time.Second, Policy: "second"},
			}},
		{"OpenAI tokens only", docOpenAI, hdr(
			"x-ratelimit-limit-tokens", "150000", "x-ratelimit-remaining-tokens", "149984"),
			[]Quota{{Limit: 150000, Remaining: 149984, Policy: "tokens"}}},
		{"Anthropic families", docAnthropic, hdr(
			"Date", dateAt(0),
			"anthropic-ratelimit-requests-limit", "50", "anthropic-ratelimit-requests-remaining", "49",
			"anthropic-ratelimit-input-tokens-limit", "40000", "anthropic-ratelimit-input-tokens-remaining", "39000",
			"anthropic-ratelimit-input-tokens-reset", "2024-06-01T12:00:02Z",
			"anthropic-ratelimit-output-tokens-limit", "8000", "anthropic-ratelimit-output-tokens-remaining", "8000",
			"anthropic-ratelimit-tokens-limit", "48000", "anthropic-ratelimit-tokens-remaining", "47000"),
			[]Quota{
				{Limit: 50, Remaining: 49, Policy: "requests"},
				{Limit: 40000, Remaining: 39000, Reset: at(2 * time.Second), Policy: "input-tokens"},
				{Limit: 8000, Remaining: 8000, Policy: "output-tokens"},
				{Limit: 48000, Remaining: 47000, Policy: "tokens"},
			}},
		{"Anthropic 429: the token quota spent, Retry-After", docAnthropic, hdr(
			"Date", dateAt(0), "retry-after", "3",
			"anthropic-ratelimit-tokens-limit", "48000", "anthropic-ratelimit-tokens-remaining", "0",
			"anthropic-ratelimit-tokens-reset", "2024-06-01T12:00:08Z"),
			[]Quota{
				{Limit: none, Remaining: none, RetryAfter: 3 * time.Second},
				{Limit: 48000, Remaining: 0, Reset: at(8 * time.Second), RetryAfter: 3 * time.Second, Policy: "tokens"},
			}},
		{"Anthropic: output tokens, fractional RFC 3339 reset", docAnthropic, hdr(
			"Date", dateAt(0),
			"anthropic-ratelimit-output-tokens-limit", "8000", "anthropic-ratelimit-output-tokens-remaining", "7900",
			"anthropic-ratelimit-output-tokens-reset", "2024-06-01T12:00:00.75Z"),
			[]Quota{{Limit: 8000, Remaining: 7900, Reset: at(750 * time.Millisecond), Policy: "output-tokens"}}},
		{"OpenAI: token reset in hours, minutes and seconds", docOpenAI, hdr(
			"x-ratelimit-limit-tokens", "30000", "x-ratelimit-remaining-tokens", "0",
			"x-ratelimit-reset-tokens", "1h2m0.5s"),
			[]Quota{{Limit: 30000, Remaining: 0, Reset: at(time.Hour + 2*time.Minute + 500*time.Millisecond), Policy: "tokens"}}},
		{"OpenAI: tokens spent, requests left", docOpenAI, hdr(
			"x-ratelimit-limit-requests", "500", "x-ratelimit-remaining-requests", "499", "x-ratelimit-reset-requests", "120ms",
			"x-ratelimit-limit-tokens", "30000", "x-ratelimit-remaining-tokens", "0", "x-ratelimit-reset-tokens", "0s"),
			[]Quota{
				{Limit: 500, Remaining: 499, Reset: at(120 * time.Millisecond), Policy: "requests"},
				{Limit: 30000, Remaining: 0, Reset: at(0), Policy: "tokens"},
			}},
		{"IETF structured policies", docDraft11, hdr(
			"RateLimit-Policy", `"burst";q=100;w=60, "daily";q=1000;w=86400`, "RateLimit", `"burst";r=50;t=30`,
			"Retry-After", "5"),
			[]Quota{
				{Limit: 100, Remaining: 50, Reset: at(30 * time.Second), Window: time.Minute, RetryAfter: 5 * time.Second, Policy: "burst"},
				{Limit: 1000, Remaining: none, Window: 24 * time.Hour, RetryAfter: 5 * time.Second, Policy: "daily"},
			}},
		{"IETF quota units", docDraft11, hdr(
			"RateLimit-Policy", `"req";q=10;w=1, "conc";q=4;qu="concurrent-requests", "bytes";q=65535;qu="content-bytes";w=10`,
			"RateLimit", `"req";r=9;t=1, "conc";r=3`),
			[]Quota{
				{Limit: 10, Remaining: 9, Reset: at(time.Second), Window: time.Second, Policy: "req"},
				{Limit: 4, Remaining: 3, Policy: "conc", Unit: "concurrent-requests"},
				{Limit: 65535, Remaining: none, Window: 10 * time.Second, Policy: "bytes", Unit: "content-bytes"},
			}},
		{"draft-06 policies", docDraft06, hdr(
			"RateLimit-Limit", "10", "RateLimit-Remaining", "9", "RateLimit-Policy", "10;w=1, 1000;w=3600"),
			[]Quota{
				{Limit: 10, Remaining: 9, Window: time.Second},
				{Limit: 1000, Remaining: none, Window: time.Hour},
			}},
		{"draft-01 list form", docDraft01, hdr("RateLimit-Limit", "10, 10;w=1, 1000;w=3600"),
			[]Quota{
				{Limit: 10, Remaining: none, Window: time.Second},
				{Limit: 1000, Remaining: none, Window: time.Hour},
			}},
		{"HubSpot", docHubSpot, hdr(
			"X-HubSpot-RateLimit-Daily", "250000", "X-HubSpot-RateLimit-Daily-Remaining", "249900",
			"X-HubSpot-RateLimit-Interval-Milliseconds", "10000", "X-HubSpot-RateLimit-Max", "100",
			"X-HubSpot-RateLimit-Remaining", "99", "X-HubSpot-RateLimit-Secondly", "10",
			"X-HubSpot-RateLimit-Secondly-Remaining", "9"),
			[]Quota{
				{Limit: 100, Remaining: 99, Window: 10 * time.Second},
				{Limit: 10, Remaining: 9, Window: time.Second, Policy: "secondly"},
				{Limit: 250000, Remaining: 249900, Window: 24 * time.Hour, Policy: "daily"},
			}},
		{"Salesforce", docSforce, hdr("Sforce-Limit-Info", "api-usage=25/5000, per-app-api-usage=17/250(appName=sample-app)"),
			[]Quota{
				{Limit: 5000, Remaining: 4975, Policy: "api-usage"},
				{Limit: 250, Remaining: 233, Policy: "per-app-api-usage"},
			}},
		{"Linear", docLinear, hdr(
			"X-RateLimit-Requests-Limit", "1500", "X-RateLimit-Requests-Remaining", "1499",
			"X-RateLimit-Complexity-Limit", "250000", "X-RateLimit-Complexity-Remaining", "249000",
			"X-RateLimit-Complexity-Reset", epochMs(time.Hour), "X-RateLimit-Resource", "x"),
			[]Quota{
				{Limit: 1500, Remaining: 1499, Policy: "requests", Scope: "x"},
				{Limit: 250000, Remaining: 249000, Reset: at(time.Hour), Policy: "complexity", Scope: "x"},
			}},
		{"disagreeing dialects both kept", docDraft11, hdr(
			"RateLimit", `"default";r=50;t=30`, "RateLimit-Policy", `"default";q=100`,
			"X-RateLimit-Limit", "5000", "X-RateLimit-Remaining", "4000"),
			[]Quota{
				{Limit: 100, Remaining: 50, Reset: at(30 * time.Second), Policy: "default"},
				{Limit: 5000, Remaining: 4000},
			}},
		{"Retry-After only", docRFC9110, hdr("Retry-After", "3"),
			[]Quota{{Limit: none, Remaining: none, RetryAfter: 3 * time.Second}}},
		{"nothing", docNone, hdr("ETag", `"x"`), nil},
	}
}

func TestQuotaKnown(t *testing.T) {
	for _, tt := range []struct {
		q    Quota
		want bool
	}{
		{unknownQuota(), false},
		{Quota{}, true}, // the zero Quota states an exhausted quota
		{unknownQuota().with(func(q *Quota) { q.Remaining = 0 }), true},
		{unknownQuota().with(func(q *Quota) { q.Reset = testNow }), true},
		{unknownQuota().with(func(q *Quota) { q.RetryAfter = time.Second }), true},
		{unknownQuota().with(func(q *Quota) { q.Window = time.Second }), true},
		{unknownQuota().with(func(q *Quota) { q.Scope = "core" }), true},
	} {
		assert.Equalf(t, tt.want, tt.q.Known(), "%+v.Known()", tt.q)
	}
}

// TestRateLimitParams checks what the RateLimit fields keep of an item's
// parameters; internal/sfv tests the parser itself.
func TestRateLimitParams(t *testing.T) {
	items, ok := sfv.List([]string{`"x";w=1;w=2;qu="tokens";qu=requests;q=1.5`}, keepPolicyParams, nil, maxMembers)
	require.True(t, ok)
	w, _ := sfWindow(&items[0])
	assert.Equal(t, 2*time.Second, w, "the last of repeated parameters wins")
	s := newPolicy("x")
	s.fromPolicy(&items[0])
	assert.True(t, s.requests, "qu as a Token")
	assert.Equal(t, float64(notStated), s.limit, "q as a Decimal")
	items, ok = sfv.List([]string{`"x";r=3;t=-1`}, keepRateLimitParams, nil, maxMembers)
	require.True(t, ok)
	s.fromRateLimit(&items[0])
	assert.Equal(t, float64(3), s.remaining)
	assert.Equal(t, time.Duration(-1), s.reset, "a negative t is not stated")
}

// TestParseHugeHeaders checks that a megabyte of hostile header costs linear
// time and yields a bounded answer.
func TestParseHugeHeaders(t *testing.T) {
	t.Parallel()
	var rl, pol, sf strings.Builder
	for i := range 40000 {
		name := strconv.Itoa(i)
		rl.WriteString(`"p` + name + `";r=1;t=1, `)
		pol.WriteString(`"p` + name + `";q=2;w=1, `)
		sf.WriteString("u" + name + "=1/2, ")
	}
	rl.WriteString(`"last";r=0`)
	pol.WriteString(`"last";q=1`)
	h := hdr("RateLimit", rl.String(), "RateLimit-Policy", pol.String(), "Sforce-Limit-Info", sf.String(),
		"RateLimit-Limit", strings.Repeat("5;w=1, ", 40000)+"5")
	start := time.Now()
	qs := ParseQuotas(h, testNow)
	assert.LessOrEqualf(t, len(qs), maxQuotas, "ParseQuotas(huge) returned %d quotas", len(qs))
	assert.Lessf(t, time.Since(start), 5*time.Second, "ParseQuotas(huge) took %v", time.Since(start))
	checkInvariants(t, h, testNow)
}

func TestParseHeadersGitHubAllocs(t *testing.T) {
	h := githubResponse()
	allocs := testing.AllocsPerRun(100, func() { ParseHeaders(h, testNow) })
	assert.Zerof(t, allocs, "ParseHeaders(GitHub response) allocates %v times", allocs)
}

// TestParseHeadersIETFAllocs: the structured fields' members are parsed in
// buffers on the stack, for one policy and for several.
func TestParseHeadersIETFAllocs(t *testing.T) {
	for _, h := range []http.Header{
		ietfStructuredResponse(),
		hdr("RateLimit", `"default";r=50;t=30`, "RateLimit-Policy", `"default";q=100;w=60`),
	} {
		allocs := testing.AllocsPerRun(100, func() { ParseHeaders(h, testNow) })
		assert.Zerof(t, allocs, "ParseHeaders(%v) allocates %v times", h, allocs)
	}
}

// checkInvariants asserts what every parse must satisfy, whatever the input.
func checkInvariants(t *testing.T, h http.Header, now time.Time) {
	t.Helper()
	check := func(what string, q Quota) {
		for _, v := range []float64{q.Limit, q.Remaining} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 && v != notStated {
				t.Fatalf("%s(%q) = %+v: bad count %v", what, h, q, v)
			}
		}
		if q.Limit >= 0 && q.Remaining > q.Limit {
			t.Fatalf("%s(%q) = %+v: Remaining above Limit", what, h, q)
		}
		if q.RetryAfter < 0 || q.Window < 0 {
			t.Fatalf("%s(%q) = %+v: negative duration", what, h, q)
		}
		if !q.Reset.IsZero() && q.Reset.Before(now.Add(-truncated)) {
			t.Fatalf("%s(%q) = %+v: Reset more than %v before now %v", what, h, q, truncated, now)
		}
	}
	q := ParseHeaders(h, now)
	check("ParseHeaders", q)
	qs := ParseQuotas(h, now)
	for _, e := range qs {
		check("ParseQuotas", e)
		if !e.Known() {
			t.Fatalf("ParseQuotas(%q) = %+v: holds a quota that states nothing", h, qs)
		}
	}
	if q.Known() && (len(qs) == 0 || !quotaEqual(qs[0], q)) {
		t.Fatalf("ParseQuotas(%q) = %+v, want ParseHeaders's %+v first", h, qs, q)
	}
}

// fuzzHeaderNames are the header names FuzzParseHeaders writes its values to.
var fuzzHeaderNames = []string{
	"Date", "Retry-After", "Retry-After-Ms", "X-RateLimit-Limit", "X-RateLimit-Remaining",
	"X-RateLimit-Reset", "X-RateLimit-Used", "X-RateLimit-Reset-After", "X-RateLimit-Resource",
	"X-RateLimit-Bucket", "X-Rate-Limit-Limit", "X-Rate-Limit-Remaining", "X-Rate-Limit-Reset",
	"X-Rate-Limit", "RateLimit", "RateLimit-Policy", "RateLimit-Limit", "RateLimit-Remaining",
	"RateLimit-Reset", "RateLimit-ResetTime", "RateLimit-Observed", "RateLimit-Name", "RateLimit-Reason",
	"X-Ratelimit-Limit-Requests", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests",
	"X-Ratelimit-Limit-Tokens", "X-Ratelimit-Reset-Tokens", "Anthropic-Ratelimit-Requests-Reset",
	"Anthropic-Ratelimit-Tokens-Limit", "X-Ratelimit-Requests-Reset", "X-Ratelimit-Complexity-Remaining",
	"X-Shopify-Shop-Api-Call-Limit", "Sforce-Limit-Info", "X-Hubspot-Ratelimit-Max",
	"X-Hubspot-Ratelimit-Remaining", "X-Hubspot-Ratelimit-Interval-Milliseconds", "X-Hubspot-Ratelimit-Daily",
	"X-Hubspot-Ratelimit-Secondly-Remaining", "X-Ratelimit-Retry-After",
	"X-Ratelimit-Remaining-Tokens", "Anthropic-Ratelimit-Requests-Limit", "Anthropic-Ratelimit-Requests-Remaining",
	"Anthropic-Ratelimit-Tokens-Remaining", "Anthropic-Ratelimit-Tokens-Reset",
	"Anthropic-Ratelimit-Input-Tokens-Limit", "Anthropic-Ratelimit-Input-Tokens-Remaining", "Anthropic-Ratelimit-Input-Tokens-Reset",
	"Anthropic-Ratelimit-Output-Tokens-Limit", "Anthropic-Ratelimit-Output-Tokens-Remaining", "Anthropic-Ratelimit-Output-Tokens-Reset",
	"X-Retry-In", "X-Rate-Limit-Retry-After-Seconds", "X-Ratelimit-Replenish-Rate", "X-Ratelimit-Burst-Capacity",
	"X-Ratelimit-Requested-Tokens", "X-Ratelimit-Fillrate", "X-Ratelimit-Interval-Seconds",
	"X-Ratelimit-Limit-Minute", "X-Ratelimit-Remaining-Minute", "X-Ratelimit-Limit-Second", "X-Ratelimit-Remaining-Second",
}

func FuzzParseHeaders(f *testing.F) {
	// Seed with every table row: its first four headers we know by name,
	// each header's lines joined by newlines.
	seeds := []http.Header{githubResponse(), ietfStructuredResponse()}
	for _, table := range [][]headerTest{githubTests(), hostileTests(), retryAfterTests(), vendorTests(), ietfTests(), regressionTests()} {
		for _, tt := range table {
			seeds = append(seeds, tt.h)
		}
	}
	for _, tt := range quotasTests() {
		seeds = append(seeds, tt.h)
	}
	for _, h := range seeds {
		var ks [4]uint8
		var vs [4]string
		n := 0
		for i, name := range fuzzHeaderNames {
			vals := h.Values(name)
			if len(vals) == 0 || n == len(ks) {
				continue
			}
			ks[n], vs[n] = uint8(i), strings.Join(vals, "\n")
			n++
		}
		f.Add(ks[0], vs[0], ks[1], vs[1], ks[2], vs[2], ks[3], vs[3], int64(0))
	}
	f.Fuzz(func(t *testing.T, k1 uint8, v1 string, k2 uint8, v2 string, k3 uint8, v3 string, k4 uint8, v4 string, skew int64) {
		h := http.Header{}
		for _, kv := range [...]struct {
			k uint8
			v string
		}{{k1, v1}, {k2, v2}, {k3, v3}, {k4, v4}} {
			name := fuzzHeaderNames[int(kv.k&0x7f)%len(fuzzHeaderNames)]
			if kv.k&0x80 != 0 {
				name = strings.ToLower(name) // a hand-built map
			}
			for line := range strings.SplitSeq(kv.v, "\n") {
				h[name] = append(h[name], line)
			}
		}
		checkInvariants(t, h, testNow.Add(time.Duration(skew)))
	})
}

func githubResponse() http.Header {
	return hdr(
		"Date", dateAt(0),
		"Content-Type", "application/json; charset=utf-8",
		"Cache-Control", "private, max-age=60, s-maxage=60",
		"Vary", "Accept, Authorization, Cookie, X-GitHub-OTP",
		"Etag", `W/"3c7d6a4b8f3f2c1e0d9b8a7f6e5d4c3b"`,
		"Last-Modified", "Fri, 31 May 2024 09:00:00 GMT",
		"X-Oauth-Scopes", "repo, read:org",
		"X-Accepted-Oauth-Scopes", "repo",
		"X-Github-Media-Type", "github.v3; format=json",
		"X-Github-Api-Version-Selected", "2022-11-28",
		"X-Ratelimit-Limit", "5000",
		"X-Ratelimit-Remaining", "4987",
		"X-Ratelimit-Reset", epoch(42*time.Minute),
		"X-Ratelimit-Used", "13",
		"X-Ratelimit-Resource", "core",
		"Strict-Transport-Security", "max-age=31536000; includeSubdomains; preload",
		"X-Github-Request-Id", "C0DE:1234:5678AB:9ABCDE:665B0000",
	)
}

func ietfStructuredResponse() http.Header {
	return hdr(
		"Date", dateAt(0),
		"Content-Type", "application/json",
		"RateLimit-Policy", `"burst";q=100;w=60, "daily";q=1000;w=86400`,
		"RateLimit", `"burst";r=50;t=30, "daily";r=900;t=40000`,
	)
}

func BenchmarkParseHeadersGitHub(b *testing.B) {
	h := githubResponse()
	b.ReportAllocs()
	for b.Loop() {
		ParseHeaders(h, testNow)
	}
}

func BenchmarkParseHeadersIETFStructured(b *testing.B) {
	h := ietfStructuredResponse()
	b.ReportAllocs()
	for b.Loop() {
		ParseHeaders(h, testNow)
	}
}

// BenchmarkParseHeadersSpellings: 16,384 spellings of one header in a
// hand-built map, linear work (it took 8.8 s and 5.6 GB before).
func BenchmarkParseHeadersSpellings(b *testing.B) {
	h := spellings("X-RateLimit-Remaining", 1<<14, func(i int) string { return strconv.Itoa(i) })
	b.ReportAllocs()
	for b.Loop() {
		ParseHeaders(h, testNow)
	}
}

func BenchmarkParseQuotasOpenAI(b *testing.B) {
	h := hdr(
		"Date", dateAt(0),
		"X-Ratelimit-Limit-Requests", "5000", "X-Ratelimit-Limit-Tokens", "160000",
		"X-Ratelimit-Remaining-Requests", "4999", "X-Ratelimit-Remaining-Tokens", "159976",
		"X-Ratelimit-Reset-Requests", "12ms", "X-Ratelimit-Reset-Tokens", "9ms",
	)
	b.ReportAllocs()
	for b.Loop() {
		ParseQuotas(h, testNow)
	}
}

// TestParseHTTPDateCalendar checks the calendar rules of the IMF-fixdate
// reader against net/http's parser: leap years, month lengths, and the
// century rules.
func TestParseHTTPDateCalendar(t *testing.T) {
	for _, year := range []int{0, 1, 1900, 1970, 2000, 2023, 2024, 2100, 9999} {
		for m := time.January; m <= time.December; m++ {
			for day := 27; day <= 32; day++ {
				// The weekday is not checked by either parser: any will do.
				s := fmt.Sprintf("Mon, %02d %s %04d 12:30:45 GMT", day, m.String()[:3], year)
				want, wantErr := http.ParseTime(s)
				got, ok := parseHTTPDate(s, new(stdBudget))
				if ok != (wantErr == nil) || ok && !got.Equal(want) {
					t.Errorf("parseHTTPDate(%q) = %v, %v; net/http: %v, %v", s, got, ok, want, wantErr)
				}
			}
		}
	}
	// RFC 9110 §5.6.7 allows a leap second, which net/http rejects: it is
	// read as the second after, at the end of a month too.
	for s, want := range map[string]time.Time{
		"Wed, 31 Dec 2025 23:59:60 GMT": time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		"Tue, 30 Jun 2015 23:59:60 GMT": time.Date(2015, 7, 1, 0, 0, 0, 0, time.UTC),
		"Tue, 30 Jun 2015 12:00:60 GMT": time.Date(2015, 6, 30, 12, 1, 0, 0, time.UTC),
	} {
		got, ok := parseHTTPDate(s, new(stdBudget))
		assert.True(t, ok && got.Equal(want), "parseHTTPDate(%q) = %v, %v; want %v", s, got, ok, want)
	}
	_, ok := parseHTTPDate("Tue, 30 Jun 2015 23:59:61 GMT", new(stdBudget))
	assert.False(t, ok, "second 61")
}

// TestFieldNames checks that every header name of the families is found
// under its field in any case, and that names close to them are not.
func TestFieldNames(t *testing.T) {
	for _, fam := range &families {
		for _, n := range fam.names {
			name := fam.prefix + n.name
			for _, s := range []string{name, strings.ToUpper(name), http.CanonicalHeaderKey(name)} {
				var fs fields
				fs.add(s, []string{"v"}, false)
				if fs.mask != 1<<n.f {
					t.Errorf("fields.add(%q) set fields %b, want %b", s, fs.mask, uint64(1)<<n.f)
				}
			}
		}
	}
	for _, s := range []string{
		"", "dat", "Dates", "X-RateLimit-", "X-RateLimit-lim", "X-RateLimit-limits", "X-RateLimit-rest",
		"X-RateLimit-useD2", "X-RateLimit-reset_after", "X-RateLimit-retry-afte", "X-RateLimit-retry\rafter",
		"X-RateLimit-Limit\x00", "X-RateLimit-bucke7", "X-RateLimit-resourcE-", "RateLimit-Limits",
		"X_RateLimit-Limit", "X-Rate-Limit-", "Retry-After-S", "X-RateLimit-limit-", "X-RateLimit--limit",
		"Anthropic-RateLimit-limit", "X-HubSpot-RateLimit-", "x-1atelimit-limit",
	} {
		var fs fields
		fs.add(s, []string{"v"}, true)
		if fs.mask != 0 {
			t.Errorf("fields.add(%q) set fields %b, want none", s, fs.mask)
		}
	}
}

// TestParseHeadersSpellingsDeterministic checks that values found under two
// spellings of one name are joined in the order of the spellings, whatever
// the order of map iteration.
func TestParseHeadersSpellingsDeterministic(t *testing.T) {
	h := http.Header{
		"X-Ratelimit-Resource": {"core"}, "x-ratelimit-resource": {"search"}, "X-RATELIMIT-RESOURCE": {"graphql"},
		"X-Ratelimit-Limit": {"60"}, "x-ratelimit-limit": {"5000"},
	}
	for range 50 {
		q := ParseHeaders(h, testNow)
		require.Equal(t, "graphql", q.Scope, "X-RATELIMIT-RESOURCE sorts first")
		require.Equal(t, float64(60), q.Limit, "the least limit")
	}
}

// fieldHeaders names a header of every field the parser collects.
var fieldHeaders = [numFields]string{ // but fNamed and fPeriod, which are no header
	fDate: "Date", fRetryAfter: "Retry-After", fRetryAfterMs: "Retry-After-Ms", fRetryIn: "X-Retry-In",
	fXReplenish: "X-RateLimit-Replenish-Rate", fXBurst: "X-RateLimit-Burst-Capacity",
	fXRequested: "X-RateLimit-Requested-Tokens", fXFillRate: "X-RateLimit-FillRate",
	fXInterval:   "X-RateLimit-Interval-Seconds",
	fXRetryAfter: "X-RateLimit-Retry-After", fXLimit: "X-RateLimit-Limit",
	fXRemaining: "X-RateLimit-Remaining", fXReset: "X-RateLimit-Reset", fXUsed: "X-RateLimit-Used",
	fXResetAfter: "X-RateLimit-Reset-After", fXResource: "X-RateLimit-Resource", fXBucket: "X-RateLimit-Bucket",
	fXDLimit: "X-Rate-Limit-Limit", fXDRemaining: "X-Rate-Limit-Remaining", fXDReset: "X-Rate-Limit-Reset",
	fZendeskLimit: "X-Rate-Limit", fRL: "RateLimit", fRLPolicy: "RateLimit-Policy",
	fRLLimit: "RateLimit-Limit", fRLRemaining: "RateLimit-Remaining", fRLReset: "RateLimit-Reset",
	fRLResetTime: "RateLimit-ResetTime", fRLObserved: "RateLimit-Observed", fRLName: "RateLimit-Name",
	fRLReason: "RateLimit-Reason", fReqLimit: "X-RateLimit-Limit-Requests",
	fReqRemaining: "X-RateLimit-Remaining-Requests", fReqReset: "X-RateLimit-Reset-Requests",
	fShopify: "X-Shopify-Shop-Api-Call-Limit", fSforce: "Sforce-Limit-Info",
	fHSDaily: "X-HubSpot-RateLimit-Daily", fHSDailyRemaining: "X-HubSpot-RateLimit-Daily-Remaining",
	fHSMax: "X-HubSpot-RateLimit-Max", fHSRemaining: "X-HubSpot-RateLimit-Remaining",
	fHSInterval: "X-HubSpot-RateLimit-Interval-Milliseconds", fHSSecondly: "X-HubSpot-RateLimit-Secondly",
	fHSSecondlyRemaining: "X-HubSpot-RateLimit-Secondly-Remaining",
}

// TestFieldsCollect checks that every field's values are found under their
// index, for responses with any number of the fields, in any order.
func TestFieldsCollect(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 500 {
		n := round % (numFields + 1)
		want := map[int][]string{}
		h := http.Header{"Content-Type": {"text/plain"}}
		for _, i := range rng.Perm(numFields)[:n] {
			if i == int(fNamed) || i == int(fPeriod) {
				continue
			}
			want[i] = []string{fmt.Sprint("v", i)}
			h[http.CanonicalHeaderKey(fieldHeaders[i])] = want[i]
		}
		var f fields
		f.collect(h, false)
		for i := range numFields {
			require.Equal(t, want[i], f.get(field(i)), "field %d (%s) of %d", i, fieldHeaders[i], n)
		}
		require.False(t, f.dup)
	}
	// A field under two spellings joins both values.
	h := http.Header{"Date": {"a"}, "date": {"b"}}
	for i := range numFields - 1 {
		if f := field(i + 1); f != fNamed && f != fPeriod {
			h[fieldHeaders[i+1]] = []string{"x"}
		}
	}
	var f fields
	f.collect(h, false)
	require.Equal(t, []string{"a", "b"}, f.get(fDate))
	require.Equal(t, []string{"x"}, f.get(field(numFields-1)))
}

// TestParseHeadersWallClock checks which responses are read against now's
// wall clock: absolute times that no usable Date anchors. Parsed with a
// clock an hour later, their times move by that hour relative to now; the
// others (Date-anchored, relative) read the same.
func TestParseHeadersWallClock(t *testing.T) {
	tests := []struct {
		name string
		h    http.Header
		wall bool
	}{
		{"epoch reset, Date", hdr("Date", dateAt(0), "X-RateLimit-Reset", epoch(time.Minute)), false},
		{"epoch reset, no Date", hdr("X-RateLimit-Reset", epoch(time.Minute)), true},
		{"epoch reset, Date a week off", hdr("Date", dateAt(7*24*time.Hour), "X-RateLimit-Reset", epoch(time.Minute)), true},
		{"epoch reset, Date 5 minutes off", hdr("Date", dateAt(5*time.Minute), "X-RateLimit-Reset", epoch(6*time.Minute)), false},
		{"epoch ms reset, no Date", hdr("X-RateLimit-Reset", epochMs(time.Minute)), true},
		{"RFC 3339 reset, no Date", hdr("X-RateLimit-Reset", testNow.Add(time.Minute).Format(time.RFC3339)), true},
		{"number neither epoch nor delta (not stated)", hdr("X-RateLimit-Reset", "99999999999999"), false},
		{"HTTP-date Retry-After, no Date", hdr("Retry-After", dateAt(time.Minute)), true},
		{"HTTP-date Retry-After, Date", hdr("Date", dateAt(0), "Retry-After", dateAt(time.Minute)), false},
		{"delta reset", hdr("X-RateLimit-Reset", "30"), false},
		{"IETF structured", hdr("RateLimit", `"a";r=1;t=30`, "RateLimit-Policy", `"a";q=10;w=60`), false},
		{"Retry-After seconds", hdr("Retry-After", "5"), false},
		{"nothing", hdr("Content-Type", "text/plain"), false},
	}
	// relative is what q says relative to now: the reset's offset (or
	// none) and the Retry-After.
	relative := func(q Quota, now time.Time) [2]time.Duration {
		r := time.Duration(-1)
		if !q.Reset.IsZero() {
			r = q.Reset.Sub(now)
		}
		return [2]time.Duration{r, q.RetryAfter}
	}
	later := testNow.Add(time.Hour)
	for _, tt := range tests {
		at, atLater := relative(ParseHeaders(tt.h, testNow), testNow), relative(ParseHeaders(tt.h, later), later)
		assert.Equal(t, tt.wall, at != atLater, "%s: (reset, Retry-After) from now: %v, an hour later %v", tt.name, at, atLater)
	}
}

// TestParseHeadersDateAgrees: a Date that agrees with the local clock to
// within its whole second does not move an absolute reset: anchoring a
// truncated reset to a truncated Date would place it up to a second off.
// A Date further off (a server clock that is wrong) still anchors it.
func TestParseHeadersDateAgrees(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 700_000_000, time.UTC)
	reset := time.Date(2026, 12, 1, 12, 0, 3, 0, time.UTC)
	for _, tc := range []struct {
		name string
		date time.Time
		want time.Time
	}{
		{"agrees", now.Truncate(time.Second), reset},
		{"an hour ahead", now.Add(time.Hour).Truncate(time.Second), now.Add(3 * time.Second)}, // 3 s after its Date
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			h.Set("Date", tc.date.Format(http.TimeFormat))
			h.Set("X-RateLimit-Remaining", "3")
			h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Add(tc.date.Sub(now.Truncate(time.Second))).Unix(), 10))
			got := ParseHeaders(h, now).Reset
			assert.True(t, got.Equal(tc.want), "ParseHeaders(%v) reset = %v, want %v", h, got, tc.want)
		})
	}
}

// TestDialectsDocumented checks that the ParseHeaders documentation lists
// the dialects as the table holds them, one item each, in their order.
func TestDialectsDocumented(t *testing.T) {
	file, err := goparser.ParseFile(token.NewFileSet(), "headers.go", nil, goparser.ParseComments)
	require.NoError(t, err)
	var text string
	for _, d := range file.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "ParseHeaders" {
			text = fn.Doc.Text()
		}
	}
	var items []string
	blocks := new(comment.Parser).Parse(text).Content
	for i, b := range blocks {
		if h, ok := b.(*comment.Heading); ok && plainText(h.Text) == "Dialects, in order of precedence" {
			list, ok := blocks[i+1].(*comment.List)
			require.True(t, ok, "the Dialects heading is followed by a list")
			for _, it := range list.Items {
				items = append(items, plainText(it.Content[0].(*comment.Paragraph).Text))
			}
		}
	}
	require.Len(t, items, len(dialects), "ParseHeaders lists %q", items)
	for i, d := range dialects {
		assert.Truef(t, strings.HasPrefix(items[i], d.name), "item %d of the ParseHeaders list is %q, want the %s dialect", i+1, items[i], d.name)
	}
}

func plainText(ts []comment.Text) string {
	var sb strings.Builder
	for _, t := range ts {
		switch t := t.(type) {
		case comment.Plain:
			sb.WriteString(string(t))
		case comment.Italic:
			sb.WriteString(string(t))
		case *comment.DocLink:
			sb.WriteString(plainText(t.Text))
		case *comment.Link:
			sb.WriteString(plainText(t.Text))
		}
	}
	return strings.Join(strings.Fields(sb.String()), " ")
}
