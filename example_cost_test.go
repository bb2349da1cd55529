package throttle_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-throttle/throttle"
	"github.com/go-throttle/throttle/throttletest"
)

// A request's cost in tokens of an LLM API's token quota: estimated up
// front from the prompt and max_tokens, passed in the context (which an SDK
// passes through), and settled once the answer's usage is known.
func ExampleWithCost() {
	// A fake OpenAI: 40000 tokens a minute, stated in x-ratelimit-*-tokens.
	api := throttletest.NewHandler(throttletest.Config{
		Dialect: throttletest.OpenAI,
		Quota:   throttletest.Quota{Limit: 500, Window: time.Minute},
		Tokens:  []throttletest.TokenQuota{{Name: "tokens", Quota: throttletest.Quota{Limit: 40000, Window: time.Minute}}},
	})
	tr := &throttle.Transport{
		Base:   api,
		Config: throttle.Config{Limit: 40000.0 / 60, Burst: 4000}, // tokens per second; a burst that holds a request
		Unit:   "tokens",                                          // the headers of the token quota correct the bucket
	}
	client := &http.Client{Transport: tr}

	prompt, maxTokens := "Name three prime numbers below ten.", 100
	ctx := throttle.WithCost(context.Background(), len(prompt)/4+maxTokens)
	body := fmt.Sprintf(`{"model":"m","max_tokens":%d,"messages":[{"role":"user","content":%q}]}`, maxTokens, prompt)
	req, err := http.NewRequestWithContext(ctx, "POST", "https://api.openai.test/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		panic(err)
	}
	var answer struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	err = json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	if err != nil {
		panic(err)
	}
	fmt.Printf("estimated %d, the server counted %d\n", len(prompt)/4+maxTokens, answer.Usage.PromptTokens+maxTokens)

	// OpenAI counts the prompt and max_tokens: settle at what it counted.
	tokens := func() float64 { return tr.Stats().Keys["api.openai.test"].Tokens }
	before := tokens()
	if err := throttle.Settle(ctx, answer.Usage.PromptTokens+maxTokens); err != nil {
		panic(err)
	}
	fmt.Printf("settling took %.0f more tokens\n", before-tokens())
	// Output:
	// estimated 108, the server counted 112
	// settling took 4 more tokens
}
