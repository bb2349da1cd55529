package throttle_test

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/go-throttle/throttle"
)

// A GitHub response whose server clock runs ten seconds ahead of the
// client's: the epoch reset is anchored to the Date header, so the wait it
// implies is the server's 42 minutes, not 42 minutes minus the skew.
func ExampleParseHeaders() {
	now := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC) // the client's clock on arrival
	server := now.Add(10 * time.Second)

	h := http.Header{}
	h.Set("Date", server.Format(http.TimeFormat))
	h.Set("X-RateLimit-Limit", "5000")
	h.Set("X-RateLimit-Remaining", "4987")
	h.Set("X-RateLimit-Reset", strconv.FormatInt(server.Add(42*time.Minute).Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")

	q := throttle.ParseHeaders(h, now)
	fmt.Println("limit:", q.Limit, "remaining:", q.Remaining, "scope:", q.Scope)
	fmt.Println("resets in:", q.Reset.Sub(now))
	fmt.Println("window stated:", q.Window != 0)
	// Output:
	// limit: 5000 remaining: 4987 scope: core
	// resets in: 42m0s
	// window stated: false
}

// The IETF structured fields name their policies; ParseHeaders picks the
// request policy with the least remaining.
func ExampleParseHeaders_ietf() {
	now := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	h := http.Header{}
	h.Set("RateLimit-Policy", `"burst";q=100;w=60, "daily";q=1000;w=86400`)
	h.Set("RateLimit", `"burst";r=50;t=30, "daily";r=20;t=3000`)

	q := throttle.ParseHeaders(h, now)
	fmt.Printf("%s: %v of %v left, window %v, resets in %v\n", q.Policy, q.Remaining, q.Limit, q.Window, q.Reset.Sub(now))
	// Output:
	// daily: 20 of 1000 left, window 24h0m0s, resets in 50m0s
}

// An OpenAI response states a request quota and a token quota; ParseQuotas
// returns both, the request quota first.
func ExampleParseQuotas() {
	now := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	h := http.Header{}
	h.Set("x-ratelimit-limit-requests", "60")
	h.Set("x-ratelimit-remaining-requests", "59")
	h.Set("x-ratelimit-reset-requests", "1s")
	h.Set("x-ratelimit-limit-tokens", "150000")
	h.Set("x-ratelimit-remaining-tokens", "149984")
	h.Set("x-ratelimit-reset-tokens", "6m0s")

	for _, q := range throttle.ParseQuotas(h, now) {
		fmt.Printf("%s: %v/%v, resets in %v\n", q.Policy, q.Remaining, q.Limit, q.Reset.Sub(now))
	}
	// Output:
	// requests: 59/60, resets in 1s
	// tokens: 149984/150000, resets in 6m0s
}
