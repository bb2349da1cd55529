package throttle_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"golang.org/x/time/rate"

	"github.com/go-throttle/throttle"
	"github.com/go-throttle/throttle/throttletest"
)

// A bucket with a burst of 3 admits three requests at once and refuses the
// fourth. A caller whose context cannot wait long enough for the next token
// (here one per minute) is refused at once instead of queueing until its
// deadline.
func ExampleBucket() {
	b := throttle.NewBucket(throttle.Config{Limit: rate.Every(time.Minute), Burst: 3})
	for i := range 4 {
		fmt.Printf("request %d allowed: %v\n", i+1, b.Allow())
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := b.Wait(ctx) // the next token is a minute away
	fmt.Println("wait too long:", errors.Is(err, throttle.ErrWaitTooLong))
	fmt.Println("deadline is the reason:", errors.Is(err, context.DeadlineExceeded))
	// Output:
	// request 1 allowed: true
	// request 2 allowed: true
	// request 3 allowed: true
	// request 4 allowed: false
	// wait too long: true
	// deadline is the reason: true
}

// An SDK whose transport is not net/http drives the bucket with Begin and
// Flight.DoneQuota, handing it what the service said in the terms of a
// Quota. A zero Config learns the quota from that first answer.
func ExampleBucket_Begin() {
	b := throttle.NewBucket(throttle.Config{})
	ctx := context.Background()

	f, err := b.Begin(ctx) // the first request goes alone: its answer teaches the quota
	if err != nil {
		fmt.Println(err)
		return
	}
	st := b.Stats()
	fmt.Println("learning:", st.Learning, "in flight:", st.InFlight)

	// ... call the service; it answers "100 per minute, 99 left, resets in 60 s".
	f.DoneQuota(200, throttle.Quota{
		Limit:     100,
		Remaining: 99,
		Reset:     time.Now().Add(time.Minute),
		Window:    time.Minute,
	})
	st = b.Stats()
	fmt.Println("learning:", st.Learning, "in flight:", st.InFlight)
	// Until the server shows that it is a fixed window, the bucket paces at
	// 95% of its steady rate, 100 a minute.
	fmt.Printf("rate: %.2f/s\n", float64(b.Limit()))
	// Output:
	// learning: true in flight: 1
	// learning: false in flight: 0
	// rate: 1.58/s
}

// Observe lowers the bucket to what the server says is left. A 429 then
// holds every caller until Retry-After, which takes precedence over the
// window's reset.
func ExampleBucket_Observe() {
	b := throttle.NewBucket(throttle.Config{Limit: 10, Burst: 10})
	fmt.Printf("tokens: %.1f\n", b.Tokens())

	ok := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}}
	ok.Header.Set("RateLimit-Limit", "100")
	ok.Header.Set("RateLimit-Remaining", "3")
	ok.Header.Set("RateLimit-Reset", "30")
	b.Observe(ok)
	fmt.Printf("tokens: %.1f\n", b.Tokens())

	tooMany := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}}
	tooMany.Header.Set("RateLimit-Remaining", "0")
	tooMany.Header.Set("RateLimit-Reset", "30")
	tooMany.Header.Set("Retry-After", "20")
	b.Observe(tooMany)
	fmt.Println("allowed:", b.Allow())
	fmt.Println("cooldown:", time.Until(b.Stats().CooldownUntil).Round(time.Second))
	// Output:
	// tokens: 10.0
	// tokens: 3.0
	// allowed: false
	// cooldown: 20s
}

// A zero Transport learns each host's quota from its rate-limit headers. The
// fake API here (an in-memory RoundTripper) allows 5 requests per hour and
// says so in GitHub's headers. After the first answer the Transport spreads
// what is left over the hour (Config.Pace is PaceEven): the third request
// would wait about 20 minutes, more than the default MaxWait of a minute, so
// it is refused at once, without being sent. GitHub names the resource each
// answer counts against (X-RateLimit-Resource: core), so the host's requests
// wait in the bucket "api.test#core".
func ExampleTransport() {
	api := throttletest.NewHandler(throttletest.Config{
		Quota: throttletest.Quota{Limit: 5, Window: time.Hour},
	})
	tr := &throttle.Transport{Base: api}
	client := &http.Client{Transport: tr}

	for range 3 {
		resp, err := client.Get("http://api.test/repos")
		if err != nil {
			var refused *throttle.RefusedError
			fmt.Println("refused:", errors.As(err, &refused), refused.Key,
				errors.Is(err, throttle.ErrWaitTooLong))
			continue
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode, "remaining:", resp.Header.Get("X-RateLimit-Remaining"))
	}
	// 95% of the steady rate of 5 an hour is one request every 12.6
	// minutes; pacing is a server-derived wait, capped by MaxCooldown.
	st := tr.Stats().Keys["api.test#core"]
	fmt.Printf("learned rate: %.1f per hour\n", float64(st.Limit)*3600)
	fmt.Println("server saw:", api.Stats().Total())
	// Output:
	// 200 remaining: 4
	// 200 remaining: 3
	// refused: true api.test#core true
	// learned rate: 6.0 per hour
	// server saw: 2
}

// With Config.Pace set to PaceBurst the Transport spends the window's quota
// at once, then holds every caller until the reset. The hold is capped by
// MaxCooldown (10 minutes by default); a caller that cannot wait even that
// long (MaxWait is a minute by default) is refused at once.
func ExampleTransport_pace() {
	api := throttletest.NewHandler(throttletest.Config{
		Quota: throttletest.Quota{Limit: 5, Window: time.Hour},
	})
	tr := &throttle.Transport{Base: api, Config: throttle.Config{Pace: throttle.PaceBurst}}
	client := &http.Client{Transport: tr}

	for range 6 {
		resp, err := client.Get("http://api.test/repos")
		if err != nil {
			fmt.Println("refused:", errors.Is(err, throttle.ErrWaitTooLong))
			continue
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode, "remaining:", resp.Header.Get("X-RateLimit-Remaining"))
	}
	st := tr.Stats().Keys["api.test#core"]
	fmt.Println("burst:", st.Burst, "tokens:", st.Tokens, "refused:", st.RefusedTooLong)
	// Output:
	// 200 remaining: 4
	// 200 remaining: 3
	// 200 remaining: 2
	// 200 remaining: 1
	// 200 remaining: 0
	// refused: true
	// burst: 5 tokens: 0 refused: 1
}

// Key chooses the bucket a request waits in. Here every tenant has its own
// quota at the API, so each gets its own bucket; health checks, for which
// Key returns "", are sent at once, neither throttled nor observed.
func ExampleTransport_Key() {
	api := throttletest.NewHandler(throttletest.Config{
		Dialect: throttletest.IETF,
		Route:   func(r *http.Request) string { return r.Header.Get("X-Tenant") },
	})
	tr := &throttle.Transport{
		Base: api,
		Key: func(r *http.Request) string {
			if r.URL.Path == "/healthz" {
				return ""
			}
			return r.URL.Host + "/" + r.Header.Get("X-Tenant")
		},
	}
	client := &http.Client{Transport: tr}

	for _, call := range []struct{ tenant, path string }{
		{"acme", "/items"}, {"globex", "/items"}, {"acme", "/items"}, {"", "/healthz"},
	} {
		req, _ := http.NewRequest("GET", "http://api.test"+call.path, nil)
		req.Header.Set("X-Tenant", call.tenant)
		resp, err := client.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
	}
	st := tr.Stats()
	for _, k := range slices.Sorted(maps.Keys(st.Keys)) {
		fmt.Println(k, "admitted:", st.Keys[k].Admitted)
	}
	fmt.Println("sent:", api.Stats().Total())
	// Output:
	// api.test/acme admitted: 2
	// api.test/globex admitted: 1
	// sent: 4
}
