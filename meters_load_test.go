package throttle_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-throttle/throttle"
	"github.com/go-throttle/throttle/throttletest"
	"github.com/stretchr/testify/assert"
	"golang.org/x/time/rate"
)

// TestMetersLoad: a fake OpenAI with a request quota and a token quota in
// fixed windows, and a Transport counting tokens (its Unit) with a Meter
// for the requests, both told the quotas. Eight workers send small chats
// for a minute, so that the request quota binds, then large ones for a
// minute, so that the token quota does: in each minute the binding quota
// is used to at least 90% with at most 1% of 429s, and neither is ever
// overspent.
func TestMetersLoad(t *testing.T) {
	for _, c := range []struct {
		name   string
		tokens rate.Limit // the Transport's Limit, in tokens per second
		meter  bool       // a Meter for the requests
		reqs   rate.Limit // its Limit
	}{
		{"told both", 600, true, 6},
		{"learning both", 0, true, 0},
		{"tokens only", 600, false, 0},
	} {
		t.Run(c.name, func(t *testing.T) { metersLoad(t, c.tokens, c.meter, c.reqs) })
	}
}

func metersLoad(t *testing.T, tokens rate.Limit, meter bool, reqs rate.Limit) {
	synctest.Test(t, func(t *testing.T) {
		const window = 10 * time.Second
		api := throttletest.NewHandler(throttletest.Config{
			Dialect: throttletest.OpenAI,
			Quota:   throttletest.Quota{Limit: 60, Window: window},
			Tokens:  []throttletest.TokenQuota{{Name: "tokens", Quota: throttletest.Quota{Limit: 6000, Window: window}}},
			Latency: 200 * time.Millisecond,
			Jitter:  100 * time.Millisecond,
		})
		tr := &throttle.Transport{
			Base:   api,
			Config: throttle.Config{Limit: tokens, Burst: 1200}, // a burst that holds a request
			Unit:   "tokens",
		}
		if meter {
			tr.Meters = []throttle.Meter{{Unit: "requests", Config: throttle.Config{Limit: reqs}}}
		}
		client := &http.Client{Transport: tr}
		chat := func(ctx context.Context, maxTokens int) error {
			prompt := strings.Repeat("word ", 20) // 25 tokens, and 3 for the message
			cost := len(prompt)/4 + 3 + maxTokens
			body := fmt.Sprintf(`{"model":"m","max_tokens":%d,"messages":[{"role":"user","content":%q}]}`, maxTokens, prompt)
			req, err := http.NewRequestWithContext(throttle.WithCost(ctx, cost), "POST", "https://api.openai.test/v1/chat/completions", strings.NewReader(body))
			if err != nil {
				return err
			}
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			return nil
		}
		phase := func(maxTokens int) throttletest.Stats {
			// Ended by cancellation, not a deadline, which the Transport
			// would refuse the last calls for at once.
			ctx, cancel := context.WithCancel(context.Background())
			defer time.AfterFunc(time.Minute, cancel).Stop()
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for ctx.Err() == nil {
						if err := chat(ctx, maxTokens); err != nil && ctx.Err() == nil {
							t.Errorf("maxTokens %d: %v", maxTokens, err)
							return
						}
					}
				})
			}
			wg.Wait()
			return api.Stats()
		}
		s1 := phase(10)  // 38 tokens a request: 60 requests are 2280 tokens
		s2 := phase(500) // 528: 60 requests would be 31680 tokens
		windows := float64(time.Minute / window)
		for _, p := range []struct {
			name             string
			requests, tokens float64 // the share of each quota counted
			refused, total   int
		}{
			{"requests bind", float64(s1.Admitted) / (60 * windows), float64(s1.Tokens["tokens"]) / (6000 * windows), s1.Refused, s1.Total()},
			{"tokens bind", float64(s2.Admitted-s1.Admitted) / (60 * windows), float64(s2.Tokens["tokens"]-s1.Tokens["tokens"]) / (6000 * windows), s2.Refused - s1.Refused, s2.Total() - s1.Total()},
		} {
			t.Logf("%s: %.1f%% of the requests, %.1f%% of the tokens, %d of %d refused", p.name, 100*p.requests, 100*p.tokens, p.refused, p.total)
			if !meter {
				if p.name == "requests bind" {
					assert.Greater(t, float64(p.refused), 0.05*float64(p.total), "without the Meter the request quota is overspent")
				}
				continue
			}
			assert.LessOrEqual(t, float64(p.refused), 0.01*float64(p.total), "%s: at most 1%% 429s", p.name)
			assert.LessOrEqual(t, p.requests, 1.0, p.name)
			assert.LessOrEqual(t, p.tokens, 1.0, p.name)
			assert.GreaterOrEqual(t, max(p.requests, p.tokens), 0.90, "%s: the binding quota used", p.name)
		}
	})
}
