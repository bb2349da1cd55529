package main

import (
	"context"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/go-throttle/throttle"
	"github.com/go-throttle/throttle/throttletest"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"golang.org/x/time/rate"
)

// A vendor is a fake LLM API and the SDK that calls it.
type vendor struct {
	name string
	// fake is the fake API: its quota of requests, and one token quota,
	// the binding one.
	fake throttletest.Config
	// unit is the token quota's name, and so the throttle.Transport's
	// Unit.
	unit string
	// newCaller returns a function that makes one SDK call with hc to the
	// API at base, after wait (if not nil) has taken the call's cost.
	newCaller func(hc *http.Client, base string, retries int, wait waitFunc) caller
}

// A caller makes one chat call of job j and settles its cost.
type caller func(ctx context.Context, j job) error

// A waitFunc waits for n tokens, as rate.Limiter.WaitN does.
type waitFunc func(ctx context.Context, n int) error

// A job is one chat call: a prompt and the most tokens its answer may use.
type job struct {
	prompt    string
	maxTokens int
	cost      int // if positive, the cost to give instead of the estimate
}

// costOr returns j's cost, else estimate.
func (j job) costOr(estimate int) int {
	if j.cost > 0 {
		return j.cost
	}
	return estimate
}

// jobOf returns the n-th job of worker w: prompts of 200 to 2000 bytes,
// max_tokens of 50 to 400, in a fixed order.
func jobOf(w, n int) job {
	size := 200 + (w*7919+n*104729)%1801
	return job{prompt: text[:size], maxTokens: 50 + (w*31+n*17)%351}
}

// text is the prompts' text.
var text = func() string {
	const words = "the quick brown fox jumps over a lazy dog while rate limits hold "
	b := make([]byte, 0, 2048)
	for len(b) < 2048 {
		b = append(b, words...)
	}
	return string(b[:2048])
}()

// promptTokens is the client's estimate of a prompt's tokens: one per 4
// bytes, as OpenAI's and Anthropic's guides estimate English text. The
// server counts its own way (the fake adds 3 per message): Settle puts
// that right.
func promptTokens(p string) int { return (len(p) + 3) / 4 }

// openAI is a fake OpenAI with 500 requests and 40000 tokens per minute in
// fixed windows, as OpenAI documents its per-minute quotas. OpenAI counts a
// request's max_tokens, not the tokens its answer used, so the cost is the
// prompt and max_tokens, and it is settled at usage.prompt_tokens plus
// max_tokens.
var openAI = vendor{
	name: "openai",
	fake: throttletest.Config{
		Dialect: throttletest.OpenAI,
		Quota:   throttletest.Quota{Limit: 500, Window: time.Minute},
		Tokens:  []throttletest.TokenQuota{{Name: "tokens", Quota: throttletest.Quota{Limit: 40000, Window: time.Minute}}},
	},
	unit: "tokens",
	newCaller: func(hc *http.Client, base string, retries int, wait waitFunc) caller {
		client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("test"),
			option.WithHTTPClient(hc), option.WithMaxRetries(retries))
		return func(ctx context.Context, j job) error {
			n := j.costOr(promptTokens(j.prompt) + j.maxTokens)
			if wait != nil {
				if err := wait(ctx, n); err != nil {
					return err
				}
			}
			ctx = throttle.WithCost(ctx, n)
			resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
				Model:     openai.ChatModelGPT6Luna,
				Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage(j.prompt)},
				MaxTokens: openai.Int(int64(j.maxTokens)),
			})
			if err != nil {
				return err
			}
			// Without a throttle.Transport there is nothing to settle.
			_ = throttle.Settle(ctx, int(resp.Usage.PromptTokens)+j.maxTokens)
			return nil
		}
	},
}

// anthropicAPI is a fake Anthropic with 200 requests and 20000 input
// tokens per minute, replenished continuously, as Anthropic documents. The
// cost is the prompt's estimate, settled at usage.input_tokens.
var anthropicAPI = vendor{
	name: "anthropic",
	fake: throttletest.Config{
		Dialect: throttletest.Anthropic,
		Quota:   throttletest.Quota{Limit: 200, Window: time.Minute, Algorithm: throttletest.TokenBucket},
		Tokens: []throttletest.TokenQuota{{Name: "input-tokens",
			Quota: throttletest.Quota{Limit: 20000, Window: time.Minute, Algorithm: throttletest.TokenBucket}}},
	},
	unit: "input-tokens",
	newCaller: func(hc *http.Client, base string, retries int, wait waitFunc) caller {
		client := anthropic.NewClient(aoption.WithBaseURL(base+"/"), aoption.WithAPIKey("test"),
			aoption.WithHTTPClient(hc), aoption.WithMaxRetries(retries))
		return func(ctx context.Context, j job) error {
			n := j.costOr(promptTokens(j.prompt))
			if wait != nil {
				if err := wait(ctx, n); err != nil {
					return err
				}
			}
			ctx = throttle.WithCost(ctx, n)
			msg, err := client.Messages.New(ctx, anthropic.MessageNewParams{
				Model:     anthropic.ModelClaudeHaiku5_5,
				MaxTokens: int64(j.maxTokens),
				Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(j.prompt))},
			})
			if err != nil {
				return err
			}
			_ = throttle.Settle(ctx, int(msg.Usage.InputTokens))
			return nil
		}
	},
}

// tokenQuota returns the vendor's token quota.
func (v vendor) tokenQuota() throttletest.Quota { return v.fake.Tokens[0].Quota }

// newTransport returns the throttle.Transport told v's quotas: the token
// quota's rate, a burst that holds the largest request, costs in v's unit;
// a Meter for the request quota, told its rate; and refusals as synthetic
// 429s.
func (v vendor) newTransport(base http.RoundTripper) *throttle.Transport {
	q, r := v.tokenQuota(), v.fake.Quota
	return &throttle.Transport{
		Base: base,
		Config: throttle.Config{
			Limit: rate.Limit(float64(q.Limit) / q.Window.Seconds()),
			Burst: burst,
		},
		Unit: v.unit,
		Meters: []throttle.Meter{{
			Unit:   "requests",
			Config: throttle.Config{Limit: rate.Limit(float64(r.Limit) / r.Window.Seconds())},
		}},
		Refusal: throttle.Refuse429,
	}
}

// A result is what one load run did.
type result struct {
	calls, failed int64              // SDK calls made, and those that returned an error
	firstErr      error              // the first of those errors
	stats         throttletest.Stats // the fake's
	elapsed       time.Duration      // the run's length
}

// share429 is the share of the requests the fake answered with 429.
func (r result) share429() float64 {
	if r.stats.Total() == 0 {
		return 0
	}
	return float64(r.stats.Refused) / float64(r.stats.Total())
}

// used is the share of the token quota available over the run that the
// fake counted.
func (r result) used(v vendor) float64 {
	q := v.tokenQuota()
	windows := float64(r.elapsed) / float64(q.Window)
	avail := float64(q.Limit) * math.Ceil(windows-1e-9) // each window begun brings the whole limit
	if q.Algorithm == throttletest.TokenBucket {
		avail = float64(q.Limit) * (1 + windows) // it starts full and refills
	}
	return float64(r.stats.Tokens[v.unit]) / avail
}

// A client is how the SDK is driven.
type client int

const (
	sdkDefault client = iota // the SDK's default client, its own retries
	xrate                    // x/time/rate's Limiter told the token quota, WaitN(cost) before each call
	throttled                // a throttle.Transport told the token and request quotas
	learning                 // a throttle.Transport that learns them from their headers
)

func (c client) String() string {
	return [...]string{"SDK default", "x/time/rate", "throttle", "throttle, learnt"}[c]
}

// burst is the burst of the clients told the quota: the default burst of a
// Transport counts requests (a few); a cost in tokens needs one that holds
// the largest request.
const burst = 2048

// load runs workers calling v's fake (served by h, reached at base with
// transport rt) for d, through c; a worker whose call failed pauses before
// its next.
func load(ctx context.Context, v vendor, h *throttletest.Handler, base string, rt http.RoundTripper, c client, workers int, d, pause time.Duration) result {
	hc := &http.Client{Transport: rt}
	var wait waitFunc
	switch c {
	case xrate:
		q := v.tokenQuota()
		wait = rate.NewLimiter(rate.Limit(float64(q.Limit)/q.Window.Seconds()), burst).WaitN
	case throttled:
		hc.Transport = v.newTransport(rt)
	case learning:
		tr := v.newTransport(rt)
		tr.Config.Limit, tr.Meters[0].Config.Limit = 0, 0
		hc.Transport = tr
	}
	call := v.newCaller(hc, base, 2, wait) // the SDKs' default: 2 retries
	return drive(ctx, h, call, workers, d, pause)
}

// drive runs workers making calls for d, each pausing after a failed call,
// and returns what they did and what h counted.
func drive(ctx context.Context, h *throttletest.Handler, call caller, workers int, d, pause time.Duration) result {
	// The run ends by cancellation, not by a deadline: a deadline would
	// have the Transport refuse at once the calls it could not admit
	// before the end.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	end := time.AfterFunc(d, cancel)
	defer end.Stop()
	var calls, failed atomic.Int64
	var errMu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				err := call(ctx, jobOf(w, n))
				if ctx.Err() != nil {
					return // the run's end, not the call's fault
				}
				calls.Add(1)
				if err != nil {
					if failed.Add(1) == 1 {
						errMu.Lock()
						firstErr = err
						errMu.Unlock()
					}
					// As a caller would, rather than spin on refusals.
					t := time.NewTimer(pause)
					select {
					case <-ctx.Done():
					case <-t.C:
					}
					t.Stop()
				}
			}
		})
	}
	wg.Wait()
	// Nothing is sent after d: the quota available is d's.
	errMu.Lock()
	defer errMu.Unlock()
	return result{calls: calls.Load(), failed: failed.Load(), firstErr: firstErr, stats: h.Stats(), elapsed: d}
}
