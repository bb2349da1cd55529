package redisstore_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-throttle/throttle"
	"github.com/go-throttle/throttle/redisstore"
)

// Replicas that share one API quota (here 50 requests per second, bursts of
// 100) share one bucket in Redis. This example needs a Redis server, so it
// is compiled but not run.
func Example() {
	rdb := redis.NewClient(&redis.Options{
		Addr:                  "localhost:6379",
		ContextTimeoutEnabled: true, // let Options.Timeout bound a hung connection
	})
	defer rdb.Close()
	store := redisstore.New(rdb, redisstore.Options{})
	ctx := context.Background()

	wait, err := store.Take(ctx, "api.example.com", 1, 50, 100)
	switch {
	case err != nil:
		log.Printf("Redis unavailable, limiting locally: %v", err)
	case wait > 0:
		fmt.Printf("over the shared quota: retry in %v\n", wait)
	default:
		fmt.Println("admitted")
	}

	// A 429 with Retry-After: 30 seen by this replica holds every replica.
	err = store.Correct(ctx, "api.example.com", throttle.Correction{Hold: 30 * time.Second})
	if err != nil {
		log.Print(err)
	}
}
