package throttletest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// TokenQuota is a quota counted in the tokens of an LLM API's chat requests
// rather than in requests: Limit tokens per Window, counted by Algorithm as a
// [Quota] counts requests, FixedWindow as OpenAI documents its per-minute
// quotas, TokenBucket as Anthropic documents its continuously replenished
// ones. Name is the unit as the dialect names it: "tokens" (OpenAI; for
// Anthropic, input and output together), "input-tokens" or "output-tokens"
// (Anthropic).
//
// The handler reads each request's JSON body, as a chat API does (OpenAI's
// chat completions, Anthropic's messages): the prompt is the text of its
// messages (and Anthropic's system), one token per 4 bytes, rounded up, and
// 3 more per message; max_tokens (or OpenAI's max_completion_tokens) bounds
// the answer, which uses Config.OutputShare of it. A request is charged
// when it arrives: the prompt, for input-tokens; max_tokens, for
// output-tokens; both, for tokens. The Anthropic dialect, as Anthropic
// documents, then gives back the output tokens the answer did not use once
// it is answered; the OpenAI dialect, which counts max_tokens, does not. A
// request refused by any quota is charged nothing. A body that is not such
// JSON gets 400 and counts against no quota.
type TokenQuota struct {
	Name string
	Quota
}

// maxBody bounds the request body the handler reads.
const maxBody = 1 << 20

// A chat is what the handler reads of a chat request.
type chat struct {
	prompt, maxTokens, output int64
}

// chatBody is the part of an OpenAI or Anthropic chat request the handler
// reads.
type chatBody struct {
	Messages []struct {
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	System              json.RawMessage `json:"system"`
	MaxTokens           int64           `json:"max_tokens"`
	MaxCompletionTokens int64           `json:"max_completion_tokens"`
}

// readChat reads r's body as a chat request and puts it back for
// Config.Handler.
func (h *Handler) readChat(r *http.Request) (chat, error) {
	if r.Body == nil {
		return chat{}, errors.New("no body")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return chat{}, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var cb chatBody
	if err := json.Unmarshal(body, &cb); err != nil {
		return chat{}, err
	}
	if cb.MaxTokens < 0 || cb.MaxCompletionTokens < 0 {
		return chat{}, errors.New("negative max_tokens")
	}
	var text int64
	for _, m := range cb.Messages {
		text += textLen(m.Content) + 3*4
	}
	text += textLen(cb.System)
	// Bounded, so that no sum of counts overflows.
	ch := chat{prompt: ceilDiv(text, 4), maxTokens: min(max(cb.MaxTokens, cb.MaxCompletionTokens), MaxLimit)}
	share := h.cfg.OutputShare
	if share <= 0 || share > 1 {
		share = 0.5
	}
	ch.output = min(int64(float64(ch.maxTokens)*share+0.999999), ch.maxTokens)
	return ch, nil
}

// textLen is the length of a message's content: a string, or parts with
// "text" (both vendors' content blocks); anything else is 0.
func textLen(raw json.RawMessage) int64 {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return int64(len(s))
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return 0
	}
	var n int64
	for _, p := range parts {
		n += int64(len(p.Text))
	}
	return n
}

// charge returns what the quota named name charges ch when it arrives, and
// what it charges in the end, once answered.
func (h *Handler) charge(name string, ch chat) (arrival, final int64) {
	out := ch.maxTokens
	if h.cfg.Dialect == Anthropic {
		out = ch.output // Anthropic adjusts output tokens to those used
	}
	switch name {
	case "input-tokens":
		return ch.prompt, ch.prompt
	case "output-tokens":
		return ch.maxTokens, out
	}
	return ch.prompt + ch.maxTokens, ch.prompt + out
}

// A tokenCounter is a TokenQuota's state.
type tokenCounter struct {
	name string
	*counter
	counted int64 // tokens charged, refunds deducted
}

// newTokenCounters returns the counters of c's token quotas. It panics on
// a quota the dialect cannot state.
func newTokenCounters(c Config, boundary func(Quota) time.Duration) []*tokenCounter {
	var tcs []*tokenCounter
	for _, tq := range c.Tokens {
		switch {
		case c.Dialect == OpenAI && tq.Name == "tokens":
		case c.Dialect == Anthropic && (tq.Name == "tokens" || tq.Name == "input-tokens" || tq.Name == "output-tokens"):
		default:
			panic(fmt.Sprintf("throttletest: token quota %q in the %v dialect", tq.Name, c.Dialect))
		}
		q := tq.Quota.normalize()
		if q.Algorithm == SlidingWindow || q.Algorithm == LeakyBucket || q.Algorithm == SlidingLog {
			panic(fmt.Sprintf("throttletest: token quota %q with %v", tq.Name, q.Algorithm))
		}
		tcs = append(tcs, &tokenCounter{name: tq.Name, counter: newCounter(q, boundary(q))})
	}
	return tcs
}

// allowsN reports whether n more tokens fit. advance must have been called.
func (c *counter) allowsN(n int64) bool {
	if c.q.Algorithm.windowed() {
		return c.curr+n <= c.limit
	}
	return n <= c.burst && c.debt <= (c.burst-n)*c.w
}

// takeN counts n tokens.
func (c *counter) takeN(n int64) {
	if c.q.Algorithm.windowed() {
		c.curr += n
	} else {
		c.debt += n * c.w
	}
}

// giveBack returns n tokens taken at elapsed time at, if the window they
// were taken in is still the current one. advance must have been called.
func (c *counter) giveBack(n int64, at time.Duration) {
	if !c.q.Algorithm.windowed() {
		c.debt = max(c.debt-n*c.w, 0)
		return
	}
	if t := c.units(at); t >= c.start && t < c.start+c.w {
		c.curr = max(c.curr-n, 0)
	}
}

// retryN is how long after elapsed time e n tokens fit: the end of the
// window, or for a bucket when it has refilled them.
func (c *counter) retryN(e time.Duration, n int64) time.Duration {
	if c.q.Algorithm.windowed() {
		return c.windowEnd() - e
	}
	excess := c.debt - (c.burst-min(n, c.burst))*c.w
	if excess <= 0 {
		return 0
	}
	return time.Duration(c.units(e)+ceilDiv(excess, c.limit))*c.unit - e
}

// A tokenReport is what a response says of one token quota.
type tokenReport struct {
	name             string
	limit, remaining int64
	reset            time.Time // real time
}

// tokensLocked charges ch to the token quotas at elapsed time e, if every
// one admits it, and reports whether they did and how long a refused
// request should wait. h.mu must be held.
func (h *Handler) tokensLocked(e time.Duration, ch chat) (ok bool, retry time.Duration) {
	ok = true
	for _, tc := range h.tokens {
		tc.advance(e)
		if n, _ := h.charge(tc.name, ch); !tc.allowsN(n) {
			ok = false
			retry = max(retry, tc.retryN(e, n))
		}
	}
	return ok, retry
}

// takeTokensLocked charges an admitted ch. h.mu must be held.
func (h *Handler) takeTokensLocked(ch chat) {
	for _, tc := range h.tokens {
		n, _ := h.charge(tc.name, ch)
		tc.takeN(n)
		tc.counted += n
	}
}

// reportTokensLocked describes the token quotas at elapsed time e. h.mu
// must be held.
func (h *Handler) reportTokensLocked(e time.Duration) []tokenReport {
	var out []tokenReport
	for _, tc := range h.tokens {
		remaining, reset, _ := tc.report(e)
		out = append(out, tokenReport{tc.name, tc.stated(), remaining, h.start.Add(reset)})
	}
	return out
}

// settle gives back what ch's answer did not use, for the quotas that
// adjust, of a request charged at elapsed time at.
func (h *Handler) settle(ch chat, at time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := max(time.Since(h.start), at)
	for _, tc := range h.tokens {
		if first, final := h.charge(tc.name, ch); final < first {
			tc.advance(e)
			tc.giveBack(first-final, at)
			tc.counted -= first - final
		}
	}
}

// writeChat answers an admitted chat request as the dialect's API does,
// with its usage.
func (h *Handler) writeChat(w http.ResponseWriter, ch chat) {
	if h.cfg.Dialect == Anthropic {
		writeJSON(w, http.StatusOK, map[string]any{
			"id": "msg_fake", "type": "message", "role": "assistant", "model": "fake",
			"content":     []map[string]string{{"type": "text", "text": "ok"}},
			"stop_reason": "end_turn",
			"usage":       map[string]int64{"input_tokens": ch.prompt, "output_tokens": ch.output},
		})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": 946684800, "model": "fake",
		"choices": []map[string]any{{
			"index": 0, "finish_reason": "stop",
			"message": map[string]string{"role": "assistant", "content": "ok"},
		}},
		"usage": map[string]int64{
			"prompt_tokens": ch.prompt, "completion_tokens": ch.output, "total_tokens": ch.prompt + ch.output,
		},
	})
}
