package throttletest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-throttle/throttle/throttletest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chatRequest posts a chat request whose one message is prompt and whose
// max_tokens is maxTokens, and returns the response with its body read.
func chatRequest(t *testing.T, h http.RoundTripper, prompt string, maxTokens int) (*http.Response, string) {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"model":      "m",
		"max_tokens": maxTokens,
		"messages":   []map[string]string{{"role": "user", "content": prompt}},
	})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), "POST", "http://api.test/v1/chat/completions", strings.NewReader(string(body)))
	require.NoError(t, err)
	resp, err := h.RoundTrip(req)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return resp, string(b)
}

// A 40-byte prompt in one message is (40 + 12) / 4 = 13 tokens.
var prompt40 = strings.Repeat("word ", 8)

func TestTokenQuotaOpenAIFixedWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := throttletest.NewHandler(throttletest.Config{
			Dialect: throttletest.OpenAI,
			Quota:   throttletest.Quota{Limit: 100, Window: time.Minute},
			Tokens:  []throttletest.TokenQuota{{Name: "tokens", Quota: throttletest.Quota{Limit: 1000, Window: time.Minute}}},
		})
		for i := 1; i <= 8; i++ {
			resp, body := chatRequest(t, h, prompt40, 100)
			require.Equal(t, http.StatusOK, resp.StatusCode, body)
			assert.Equal(t, "1000", resp.Header.Get("X-Ratelimit-Limit-Tokens"))
			assert.Equal(t, strconv.Itoa(1000-113*i), resp.Header.Get("X-Ratelimit-Remaining-Tokens"), "13 prompt + 100 max_tokens each")
			assert.Equal(t, "1m0s", resp.Header.Get("X-Ratelimit-Reset-Tokens"))
			assert.Equal(t, strconv.Itoa(100-i), resp.Header.Get("X-Ratelimit-Remaining-Requests"))
			var cc struct {
				Usage struct {
					PromptTokens     int `json:"prompt_tokens"`
					CompletionTokens int `json:"completion_tokens"`
				} `json:"usage"`
			}
			require.NoError(t, json.Unmarshal([]byte(body), &cc))
			assert.Equal(t, 13, cc.Usage.PromptTokens)
			assert.Equal(t, 50, cc.Usage.CompletionTokens, "half of max_tokens")
		}
		assert.Equal(t, map[string]int64{"tokens": 904}, h.Stats().Tokens, "OpenAI counts max_tokens: nothing given back")

		resp, _ := chatRequest(t, h, prompt40, 100)
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "113 more do not fit in 96")
		assert.Equal(t, "96", resp.Header.Get("X-Ratelimit-Remaining-Tokens"), "the refusal is charged nothing")
		assert.Equal(t, "92", resp.Header.Get("X-Ratelimit-Remaining-Requests"))
		resp, _ = chatRequest(t, h, "", 80)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "3 + 80 fit")

		time.Sleep(time.Minute)
		resp, _ = chatRequest(t, h, prompt40, 100)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "887", resp.Header.Get("X-Ratelimit-Remaining-Tokens"), "a new window")
	})
}

func TestTokenQuotaAnthropicRefill(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := throttletest.NewHandler(throttletest.Config{
			Dialect:     throttletest.Anthropic,
			Quota:       throttletest.Quota{Limit: 50, Window: time.Minute, Algorithm: throttletest.TokenBucket},
			OutputShare: 0.2,
			Tokens: []throttletest.TokenQuota{
				{Name: "input-tokens", Quota: throttletest.Quota{Limit: 600, Window: time.Minute, Algorithm: throttletest.TokenBucket}},
				{Name: "output-tokens", Quota: throttletest.Quota{Limit: 600, Window: time.Minute, Algorithm: throttletest.TokenBucket}},
			},
		})
		start := time.Now().UTC()
		resp, body := chatRequest(t, h, prompt40, 300)
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		assert.Equal(t, "600", resp.Header.Get("Anthropic-Ratelimit-Input-Tokens-Limit"))
		assert.Equal(t, "587", resp.Header.Get("Anthropic-Ratelimit-Input-Tokens-Remaining"))
		assert.Equal(t, start.Add(2*time.Second).Format(time.RFC3339), resp.Header.Get("Anthropic-Ratelimit-Input-Tokens-Reset"),
			"13 tokens at 10/s: full again in 1.3s, rounded up")
		assert.Equal(t, "300", resp.Header.Get("Anthropic-Ratelimit-Output-Tokens-Remaining"), "max_tokens is charged when the request arrives")
		assert.Equal(t, start.Add(30*time.Second).Format(time.RFC3339), resp.Header.Get("Anthropic-Ratelimit-Output-Tokens-Reset"))
		assert.Equal(t, "49", resp.Header.Get("Anthropic-Ratelimit-Requests-Remaining"))
		var msg struct {
			Usage struct {
				InputTokens  int `json:"input_tokens"`
				OutputTokens int `json:"output_tokens"`
			} `json:"usage"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &msg))
		assert.Equal(t, 13, msg.Usage.InputTokens)
		assert.Equal(t, 60, msg.Usage.OutputTokens, "a fifth of max_tokens")
		assert.Equal(t, map[string]int64{"input-tokens": 13, "output-tokens": 60}, h.Stats().Tokens, "the unused output was given back")

		resp, _ = chatRequest(t, h, prompt40, 500)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "60 + 500 output tokens fit in 600")
		assert.Equal(t, "40", resp.Header.Get("Anthropic-Ratelimit-Output-Tokens-Remaining"))
		resp, _ = chatRequest(t, h, prompt40, 500)
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "60 + 100 + 500 do not")
		assert.Equal(t, "6", resp.Header.Get("Retry-After"), "160 used, 440 left: 500 fit once 60 more refill at 10/s")
		time.Sleep(5 * time.Second)
		resp, _ = chatRequest(t, h, prompt40, 500)
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "not before")
		time.Sleep(time.Second)
		resp, _ = chatRequest(t, h, prompt40, 500)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "refilled continuously")
	})
}

func TestTokenQuotaBadBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := throttletest.NewHandler(throttletest.Config{
			Dialect: throttletest.OpenAI,
			Tokens:  []throttletest.TokenQuota{{Name: "tokens"}},
		})
		for _, body := range []string{"not json", `{"max_tokens": -1}`} {
			req, err := http.NewRequestWithContext(t.Context(), "POST", "http://api.test/v1/chat/completions", strings.NewReader(body))
			require.NoError(t, err)
			resp, err := h.RoundTrip(req)
			require.NoError(t, err)
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
			resp.Body.Close()
		}
		assert.Equal(t, 0, h.Stats().Total(), "counted against no quota")
	})
}
