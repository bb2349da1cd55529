package realworld_test

import (
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/go-throttle/throttle/realworld"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExpressExchange checks what Express's and ExpressDraft6's godoc say
// they send, on a quota of 3 per minute so that one window holds the test,
// and that the instance counts what it admits, before and after Close.
func TestExpressExchange(t *testing.T) {
	tests := []struct {
		draft string
		// the rate-limit headers of the n-th answer, n from 1: regexps of
		// whole values. t is 60, or 59 if the test is slow.
		want func(n int) map[string]string
	}{
		{"draft-8", func(n int) map[string]string {
			return map[string]string{
				"RateLimit":        `"3-in-1min"; r=` + left(n) + `; t=(59|60)`,
				"RateLimit-Policy": `"3-in-1min"; q=3; w=60; pk=:[A-Za-z0-9+/]+=*:`,
			}
		}},
		{"draft-6", func(n int) map[string]string {
			return map[string]string{
				"RateLimit-Policy":    `3;w=60`,
				"RateLimit-Limit":     `3`,
				"RateLimit-Remaining": left(n),
				"RateLimit-Reset":     `(59|60)`,
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.draft, func(t *testing.T) {
			inst, err := realworld.StartExpress(tt.draft, 3, time.Minute)
			requireAvailable(t, err)
			defer inst.Close()
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
			for n := 1; n <= 5; n++ {
				resp, err := hc.Get(inst.URL)
				require.NoError(t, err)
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.NoError(t, err)
				if n <= 3 {
					assert.Equal(t, http.StatusOK, resp.StatusCode, "request %d", n)
					assert.Equal(t, "ok\n", string(body), "request %d", n)
					assert.Empty(t, resp.Header.Get("Retry-After"), "request %d", n)
				} else {
					assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "request %d", n)
					assert.Regexp(t, `^(59|60)$`, resp.Header.Get("Retry-After"), "request %d", n)
				}
				for k, v := range tt.want(n) {
					assert.Regexp(t, regexp.MustCompile("^"+v+"$"), resp.Header.Get(k), "request %d: %s", n, k)
				}
				for _, k := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
					assert.Empty(t, resp.Header.Values(k), "request %d: legacy header %s", n, k)
				}
				if n == 2 {
					assert.Equal(t, int64(2), inst.Admitted(), "admitted while running")
				}
			}
			require.NoError(t, inst.Close(), "a clean exit on SIGTERM")
			assert.Equal(t, int64(3), inst.Admitted(), "admitted after Close")
			assert.NoError(t, inst.Close(), "a second Close")
			_, err = hc.Get(inst.URL)
			assert.Error(t, err, "the server still answers after Close")
		})
	}
}

// left is Remaining after the n-th request of a quota of 3: never below 0.
func left(n int) string { return string(rune('0' + max(3-n, 0))) }

// TestNodeExchange checks what Fastify's and Nest's godoc say they send, on
// a quota of 3 per minute, and that each counts what it admits.
func TestNodeExchange(t *testing.T) {
	tests := []struct {
		script string
		// the headers of the n-th answer: regexps of whole values, "" for
		// absent. t is 60, or 59 if the test is slow.
		want func(n int) map[string]string
	}{
		{"fastify.js", func(n int) map[string]string {
			h := map[string]string{
				"X-RateLimit-Limit":     `3`,
				"X-RateLimit-Remaining": left(n),
				"X-RateLimit-Reset":     `(59|60)`,
				"Retry-After":           ``,
			}
			if n > 3 {
				h["Retry-After"] = `(59|60)`
			}
			return h
		}},
		{"nest.js", func(n int) map[string]string {
			if n > 3 {
				return map[string]string{"Retry-After": `(59|60)`, "X-RateLimit-Remaining": ``}
			}
			return map[string]string{
				"X-RateLimit-Limit":     `3`,
				"X-RateLimit-Remaining": left(n),
				"X-RateLimit-Reset":     `(59|60)`,
				"Retry-After":           ``,
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			inst, err := realworld.StartNode(tt.script, 3, time.Minute)
			requireAvailable(t, err)
			defer inst.Close()
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
			for n := 1; n <= 5; n++ {
				resp, err := hc.Get(inst.URL)
				require.NoError(t, err)
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.NoError(t, err)
				if n <= 3 {
					assert.Equal(t, http.StatusOK, resp.StatusCode, "request %d", n)
					assert.Equal(t, "ok\n", string(body), "request %d", n)
				} else {
					assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "request %d", n)
				}
				for k, v := range tt.want(n) {
					assert.Regexp(t, regexp.MustCompile("^"+v+"$"), resp.Header.Get(k), "request %d: %s", n, k)
				}
			}
			require.NoError(t, inst.Close(), "a clean exit on SIGTERM")
			assert.Equal(t, int64(3), inst.Admitted(), "admitted after Close")
		})
	}
}

func TestExpressBadConfig(t *testing.T) {
	_, err := realworld.NodePath()
	requireAvailable(t, err)
	_, err = realworld.StartExpress("draft-5", 3, time.Minute)
	assert.ErrorContains(t, err, `headers "draft-5": want one of draft-8, draft-7, draft-6`)
}
