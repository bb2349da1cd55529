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

// TestScriptExchange checks what Express's, ExpressDraft6's, ExpressLegacy's, Fastify's,
// Flask's, DRF's and Nest's godoc say they send, on a quota of 3 per minute so that
// one window holds the test, and that each instance counts what it admits,
// before and after Close.
func TestScriptExchange(t *testing.T) {
	// retry is Retry-After of the n-th answer: absent but on a 429. t is 60,
	// or 59 if the test is slow.
	retry := func(n int) string {
		if n > 3 {
			return `(59|60)`
		}
		return ``
	}
	tests := []struct {
		name  string
		start func() (*realworld.Instance, error)
		// the headers of the n-th answer, from 1: regexps of whole values,
		// `` for absent.
		want func(n int) map[string]string
	}{
		{"express draft-8", func() (*realworld.Instance, error) { return realworld.StartExpress("draft-8", 3, time.Minute) },
			func(n int) map[string]string {
				return map[string]string{
					"RateLimit":        `"3-in-1min"; r=` + left(n) + `; t=(59|60)`,
					"RateLimit-Policy": `"3-in-1min"; q=3; w=60; pk=:[A-Za-z0-9+/]+=*:`,
					"Retry-After":      retry(n),
					// The legacy headers are off.
					"X-RateLimit-Limit": ``, "X-RateLimit-Remaining": ``, "X-RateLimit-Reset": ``,
				}
			}},
		{"express draft-6", func() (*realworld.Instance, error) { return realworld.StartExpress("draft-6", 3, time.Minute) },
			func(n int) map[string]string {
				return map[string]string{
					"RateLimit-Policy":    `3;w=60`,
					"RateLimit-Limit":     `3`,
					"RateLimit-Remaining": left(n),
					"RateLimit-Reset":     `(59|60)`,
					"Retry-After":         retry(n),
					"X-RateLimit-Limit":   ``, "X-RateLimit-Remaining": ``, "X-RateLimit-Reset": ``,
				}
			}},
		{"express legacy", func() (*realworld.Instance, error) { return realworld.StartExpress("legacy", 3, time.Minute) },
			func(n int) map[string]string {
				return map[string]string{
					"X-RateLimit-Limit":     `3`,
					"X-RateLimit-Remaining": left(n),
					"X-RateLimit-Reset":     `[0-9]{10}`, // Unix seconds (rounded up: not checked here)
					"Retry-After":           retry(n),
					// The standard headers are off.
					"RateLimit": ``, "RateLimit-Policy": ``, "RateLimit-Limit": ``, "RateLimit-Remaining": ``, "RateLimit-Reset": ``,
				}
			}},
		{"fastify", func() (*realworld.Instance, error) { return realworld.StartNode("fastify.js", 3, time.Minute) },
			func(n int) map[string]string {
				return map[string]string{
					"X-RateLimit-Limit":     `3`,
					"X-RateLimit-Remaining": left(n),
					"X-RateLimit-Reset":     `(59|60)`,
					"Retry-After":           retry(n),
				}
			}},
		{"flask", func() (*realworld.Instance, error) { return realworld.StartFlask(3, time.Minute, "--headers", "on") },
			func(n int) map[string]string {
				return map[string]string{
					"X-RateLimit-Limit":     `3`,
					"X-RateLimit-Remaining": left(n),
					"X-RateLimit-Reset":     `[0-9]{10}`,
					"Retry-After":           `(59|60)`, // on every answer
				}
			}},
		{"flask without headers", func() (*realworld.Instance, error) { return realworld.StartFlask(3, time.Minute, "--headers", "off") },
			func(n int) map[string]string {
				return map[string]string{"X-RateLimit-Limit": ``, "X-RateLimit-Remaining": ``, "Retry-After": ``}
			}},
		{"drf", func() (*realworld.Instance, error) { return realworld.StartDRF(3, time.Minute) },
			func(n int) map[string]string {
				// Nothing on a 2xx; a 429's Retry-After is when the oldest
				// logged request leaves the log, rounded up.
				return map[string]string{"X-RateLimit-Limit": ``, "X-RateLimit-Remaining": ``, "RateLimit": ``, "Retry-After": retry(n)}
			}},
		{"nest", func() (*realworld.Instance, error) { return realworld.StartNode("nest.js", 3, time.Minute) },
			func(n int) map[string]string {
				if n > 3 { // a 429 says only when the block ends
					return map[string]string{"Retry-After": retry(n), "X-RateLimit-Remaining": ``}
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
		t.Run(tt.name, func(t *testing.T) {
			inst, err := tt.start()
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

func TestExpressBadConfig(t *testing.T) {
	_, err := realworld.NodePath()
	requireAvailable(t, err)
	_, err = realworld.StartExpress("draft-5", 3, time.Minute)
	assert.ErrorContains(t, err, `headers "draft-5": want one of draft-8, draft-7, draft-6, legacy`)
}
