package throttle

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEventKindString(t *testing.T) {
	for k, want := range map[EventKind]string{
		EventWait: "wait", EventRefused: "refused", EventCooldown: "cooldown", EventLimit: "limit",
		EventStoreDown: "store down", EventStoreUp: "store up", 0: "unknown", 99: "unknown",
	} {
		assert.Equal(t, want, k.String(), "EventKind(%d).String()", int(k))
	}
}

// TestEventLogger: Config.Logger receives the events OnEvent does, one
// record each, with the bucket's name; nothing is logged without it.
func TestEventLogger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			},
		}))
		var kinds []EventKind
		b := NewBucket(Config{Limit: 1, Burst: 1, MaxWait: time.Second, Name: "api", Logger: logger,
			OnEvent: func(e Event) { kinds = append(kinds, e.Kind) }})
		b.ObserveQuota(http.StatusTooManyRequests, Quota{Limit: -1, Remaining: -1, RetryAfter: 5 * time.Second})
		require.ErrorIs(t, b.Wait(t.Context()), ErrWaitTooLong)
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		require.Len(t, lines, len(kinds), "one record per event %v:\n%s", kinds, buf.String())
		for i, k := range kinds {
			assert.Contains(t, lines[i], "bucket=api", "record %d", i)
			switch k {
			case EventCooldown:
				assert.Contains(t, lines[i], `level=WARN msg="throttle: cooldown"`)
				assert.Contains(t, lines[i], "for=5s")
			case EventRefused:
				assert.Contains(t, lines[i], `level=WARN msg="throttle: refused"`)
				assert.Contains(t, lines[i], "wait too long")
			case EventLimit:
				assert.Contains(t, lines[i], `level=INFO msg="throttle: rate"`)
			}
		}
		assert.Contains(t, kinds, EventCooldown)
		assert.Contains(t, kinds, EventRefused)
	})
}

func TestTransportEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var kinds []EventKind
		tr := &Transport{
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				h := http.Header{}
				h.Set("Retry-After", "5")
				return newResponse(r, 429, h, ""), nil
			}),
			Config: Config{Limit: 10, MaxWait: time.Second, OnEvent: func(e Event) {
				mu.Lock()
				kinds = append(kinds, e.Kind)
				mu.Unlock()
				assert.Equal(t, "api.test", e.Name)
			}},
		}
		req, _ := http.NewRequest("GET", "http://api.test/", nil)
		_, err := tr.RoundTrip(req)
		require.NoError(t, err)
		_, err = tr.RoundTrip(req)
		require.ErrorIs(t, err, ErrWaitTooLong)
		// The 429 without quota headers cuts the rate, then cools down.
		assert.Equal(t, []EventKind{EventLimit, EventCooldown, EventRefused}, kinds)
		st := tr.Stats().Total
		assert.Equal(t, uint64(1), st.Cooldowns)
		assert.Equal(t, uint64(1), st.RefusedTooLong)
	})
}
