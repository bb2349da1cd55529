package realworld_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-throttle/throttle"
	"github.com/go-throttle/throttle/realworld"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// TestMaxInFlightNginx: nginx's limit_conn (4 requests of one address in
// flight, a bare 429 beyond), in front of a backend that answers in 100 ms,
// in real time on loopback. 16 goroutines through a plain client draw 429s;
// through a Transport with MaxInFlight 4 they draw none and keep the 4
// slots busy.
func TestMaxInFlightNginx(t *testing.T) {
	const conns, latency, d = 4, 100 * time.Millisecond, 2 * time.Second
	for _, c := range []struct {
		name string
		rt   func() http.RoundTripper
	}{
		{"plain", func() http.RoundTripper { return http.DefaultTransport.(*http.Transport).Clone() }},
		{"MaxInFlight", func() http.RoundTripper {
			base := http.DefaultTransport.(*http.Transport).Clone()
			return &throttle.Transport{Base: base, Config: throttle.Config{Limit: rate.Inf, MaxInFlight: conns}}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			inst, err := realworld.StartNginxLimitConn(conns, latency)
			if errors.Is(err, realworld.ErrUnavailable) {
				if os.Getenv("CI") == "true" {
					t.Fatalf("CI=true and %v", err)
				}
				t.Skip(err)
			}
			require.NoError(t, err)
			client := &http.Client{Transport: c.rt()}
			var ok, refused atomic.Int64
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(d, cancel)
			var wg sync.WaitGroup
			for range 16 {
				wg.Go(func() {
					for ctx.Err() == nil {
						req, _ := http.NewRequestWithContext(ctx, "GET", inst.URL, nil)
						resp, err := client.Do(req)
						if err != nil {
							continue // the run's end
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						switch resp.StatusCode {
						case http.StatusOK:
							ok.Add(1)
						case http.StatusTooManyRequests:
							refused.Add(1)
						}
					}
				})
			}
			wg.Wait()
			client.CloseIdleConnections()
			require.NoError(t, inst.Close())
			most := float64(conns) * float64(d) / float64(latency) // the slots kept busy
			t.Logf("%s: %d 200s (at most %.0f), %d 429s; nginx admitted %d", c.name, ok.Load(), most, refused.Load(), inst.Admitted())
			if c.name == "plain" {
				assert.Greater(t, refused.Load(), ok.Load(), "the server limits what is in flight")
				return
			}
			assert.Zero(t, refused.Load(), "never more in flight than nginx allows")
			assert.GreaterOrEqual(t, float64(ok.Load()), 0.7*most, "the slots kept busy")
		})
	}
}
