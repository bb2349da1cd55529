package throttletest_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/go-throttle/throttle/throttletest"
)

// The handler is also an http.RoundTripper: a client can use it with no
// network, and, inside a testing/synctest bubble, in virtual time.
func Example() {
	h := throttletest.NewHandler(throttletest.Config{
		Quota:   throttletest.Quota{Limit: 3, Window: time.Hour},
		Dialect: throttletest.IETF,
	})
	client := &http.Client{Transport: h}
	for range 5 {
		resp, err := client.Get("http://api.test/items")
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Println(resp.Status, "remaining:", resp.Header.Get("RateLimit-Remaining"),
			"policy:", resp.Header.Get("RateLimit-Policy"))
	}
	fmt.Printf("%+v\n", h.Stats().Counts)
	// Output:
	// 200 OK remaining: 2 policy: 3;w=3600
	// 200 OK remaining: 1 policy: 3;w=3600
	// 200 OK remaining: 0 policy: 3;w=3600
	// 429 Too Many Requests remaining: 0 policy: 3;w=3600
	// 429 Too Many Requests remaining: 0 policy: 3;w=3600
	// {Admitted:3 Refused:2 Secondary:0 Shed:0}
}

// GitHub-style resources each have their own quota, chosen by Route.
func Example_resources() {
	h := throttletest.NewHandler(throttletest.Config{
		Quota: throttletest.Quota{Limit: 5000, Window: time.Hour},
		Resources: map[string]throttletest.Quota{
			"search": {Limit: 30, Window: time.Minute},
		},
		Route: func(r *http.Request) string {
			if r.URL.Path == "/search/code" {
				return "search"
			}
			return throttletest.DefaultResource
		},
	})
	client := &http.Client{Transport: h}
	for _, path := range []string{"/search/code", "/repos/o/r", "/search/code"} {
		resp, err := client.Get("https://api.github.test" + path)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Println(path, resp.StatusCode,
			resp.Header.Get("X-RateLimit-Resource"),
			resp.Header.Get("X-RateLimit-Remaining")+"/"+resp.Header.Get("X-RateLimit-Limit"))
	}
	// Output:
	// /search/code 200 search 29/30
	// /repos/o/r 200 core 4999/5000
	// /search/code 200 search 28/30
}

// A Server serves the fake API on a loopback address, for clients that need
// a URL.
func ExampleNewServer() {
	s := throttletest.NewServer(throttletest.Config{
		Quota:   throttletest.Quota{Limit: 1, Window: time.Hour},
		Dialect: throttletest.RetryAfterOnly,
	})
	defer s.Close()
	for range 2 {
		resp, err := s.Client().Get(s.URL)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode, resp.Header.Get("Retry-After") != "")
	}
	fmt.Println(s.Stats().Admitted, "admitted,", s.Stats().Refused, "refused")
	// Output:
	// 200 false
	// 429 true
	// 1 admitted, 1 refused
}

// A LeakyBucket with the None dialect is nginx's limit_req:
//
//	limit_req_zone $binary_remote_addr zone=api:1m rate=1r/m;
//	limit_req zone=api burst=2 nodelay;
//	limit_req_status 429;
//
// An idle bucket admits burst+1 requests at once; the rest get a bare 429.
func ExampleQuota_nginx() {
	h := throttletest.NewHandler(throttletest.Config{
		Quota: throttletest.Quota{
			Limit: 1, Window: time.Minute,
			Algorithm: throttletest.LeakyBucket, Burst: 2 + 1, NoDelay: true,
		},
		Dialect: throttletest.None,
	})
	client := &http.Client{Transport: h}
	for range 5 {
		resp, err := client.Get("http://api.test/")
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode, resp.Header.Get("Retry-After") == "")
	}
	// Output:
	// 200 true
	// 200 true
	// 200 true
	// 429 true
	// 429 true
}
