package throttle_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"github.com/go-throttle/throttle"
)

// Interactive requests go ahead of background work queued before them. The
// low-priority waiter queues first, the high-priority one second; the
// high-priority one is served first.
func ExampleWithPriority() {
	b := throttle.NewBucket(throttle.Config{Limit: 20, Burst: 1})
	b.Allow() // the next token is 50ms away
	served := make(chan string, 2)
	queue := func(name string, p throttle.Priority) {
		queued := b.Stats().Queued
		go func() {
			if err := b.Wait(throttle.WithPriority(context.Background(), p)); err == nil {
				served <- name
			}
		}()
		for b.Stats().Queued == queued {
			time.Sleep(time.Millisecond) // until it is queued
		}
	}
	queue("background sync", throttle.PriorityLow)
	queue("user click", throttle.PriorityHigh)
	fmt.Println(<-served)
	fmt.Println(<-served)
	// Output:
	// user click
	// background sync
}

// Each API key gets its own bucket on each host: a quota spent by one
// tenant does not hold back another. The keys name the API key by a digest,
// never by the secret itself.
func ExampleUserKey() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	tr := &throttle.Transport{
		Config: throttle.Config{Limit: 1, Burst: 1, MaxQueue: -1}, // one request a second per tenant, no waiting
		Key:    throttle.UserKey(throttle.HeaderDigest("X-Api-Key")),
	}
	client := &http.Client{Transport: tr}
	for _, apiKey := range []string{"key-of-alice", "key-of-alice", "key-of-bob"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("X-Api-Key", apiKey)
		resp, err := client.Do(req)
		if err != nil {
			fmt.Println(apiKey, "refused:", errors.Is(err, throttle.ErrQueueFull))
			continue
		}
		resp.Body.Close()
		fmt.Println(apiKey, "sent")
	}
	host := srv.Listener.Addr().String()
	for _, k := range slices.Sorted(maps.Keys(tr.Stats().Keys)) {
		fmt.Println("bucket", strings.Replace(k, host, "HOST", 1))
	}
	// Output:
	// key-of-alice sent
	// key-of-alice refused: true
	// key-of-bob sent
	// bucket HOST/808a1d81b5de08d7
	// bucket HOST/d16a80956c32f3f5
}
