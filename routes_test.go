package throttle

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-throttle/throttle/throttletest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTransportScopes: GitHub names the resource of each response; spending
// the search quota must not hold back core requests.
func TestTransportScopes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := throttletest.NewHandler(throttletest.Config{
			Quota:     throttletest.Quota{Limit: 100, Window: time.Minute},
			Resources: map[string]throttletest.Quota{"search": {Limit: 3, Window: time.Minute}},
			Route: func(r *http.Request) string {
				if strings.HasPrefix(r.URL.Path, "/search/") {
					return "search"
				}
				return "core"
			},
		})
		// PaceBurst: spend what is left at once (PaceEven would spread the
		// 3 searches over the minute).
		tr := &Transport{Base: srv, Config: Config{MaxWait: 5 * time.Second, Pace: PaceBurst}}
		get := func(path string) error {
			req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://api.github.test"+path, nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		for range 3 {
			require.NoError(t, get("/search/issues"))
		}
		err := get("/search/code")
		require.ErrorIs(t, err, ErrWaitTooLong, "search is spent for a minute")
		assert.Contains(t, err.Error(), "api.github.test#search")

		start := time.Now()
		for range 5 {
			require.NoError(t, get("/repos/o/r"), "core is not held back by search")
		}
		assert.Less(t, time.Since(start), 5*time.Second)
		assert.Equal(t, 0, srv.Stats().Refused)
		keys := tr.Stats().Keys
		assert.Contains(t, keys, "api.github.test#search")
		assert.Contains(t, keys, "api.github.test#core")
	})
}

func TestTransportEvictsIdleBuckets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{
			Base:        roundTripFunc(func(r *http.Request) (*http.Response, error) { return newResponse(r, 200, nil, ""), nil }),
			Config:      Config{Limit: 10},
			IdleTimeout: time.Minute,
		}
		for i := range 100 {
			req, _ := http.NewRequest("GET", "http://host"+strconv.Itoa(i)+".test/", nil)
			_, err := tr.RoundTrip(req)
			require.NoError(t, err)
		}
		assert.Len(t, tr.Stats().Keys, 100)
		time.Sleep(2 * time.Minute)
		req, _ := http.NewRequest("GET", "http://last.test/", nil)
		_, err := tr.RoundTrip(req)
		require.NoError(t, err)
		assert.Len(t, tr.Stats().Keys, 1, "idle buckets are dropped")
	})
}

// TestTransportLookupCache checks the routes' lookup: a bucket dropped as
// idle is not served from it, nor is a route's old bucket once the server
// names its scope.
func TestTransportLookupCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		scope := ""
		tr := &Transport{
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				h := http.Header{}
				if scope != "" {
					h.Set("X-RateLimit-Resource", scope)
				}
				return newResponse(r, 200, h, ""), nil
			}),
			Config:      Config{Limit: 10},
			IdleTimeout: time.Minute,
		}
		get := func() {
			req, _ := http.NewRequest("GET", "http://api.test/repos/x", nil)
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			resp.Body.Close()
		}
		get()
		get() // from the cache
		assert.Equal(t, uint64(2), tr.Stats().Keys["api.test"].Admitted)
		time.Sleep(2 * time.Minute) // the bucket is idle and a sweep is due
		get()
		assert.Equal(t, uint64(1), tr.Stats().Keys["api.test"].Admitted, "a new bucket, not the dropped one")
		scope = "core"
		get() // names the scope: its answer goes to api.test#core
		get()
		keys := tr.Stats().Keys
		assert.Equal(t, uint64(1), keys["api.test#core"].Admitted, "the route moved to the scope's bucket")
	})
}

// TestTransportIdleAfterLastUse: a bucket is kept for IdleTimeout after
// its last request, and dropped at the first sweep after that.
func TestTransportIdleAfterLastUse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return newResponse(r, 200, http.Header{}, ""), nil
			}),
			IdleTimeout: 8 * time.Second,
		}
		get := func(host string) {
			req, _ := http.NewRequest("GET", "http://"+host+"/x", nil)
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			resp.Body.Close()
		}
		get("a.test") // recorded
		time.Sleep(900 * time.Millisecond)
		get("a.test") // its last request
		time.Sleep(3200 * time.Millisecond)
		get("b.test") // a sweep
		time.Sleep(4400 * time.Millisecond)
		get("c.test") // a sweep 7.6 s after a.test's last request
		assert.Contains(t, tr.Stats().Keys, "a.test", "dropped before IdleTimeout passed since its last request")
		time.Sleep(5 * time.Second)
		get("c.test") // a sweep 12.6 s after it
		assert.NotContains(t, tr.Stats().Keys, "a.test", "kept after IdleTimeout")
	})
}

// TestTransportScopeOfOneRoute: a server that names a scope on one route
// only; the key's own bucket, which its other routes use, keeps what it
// learned.
func TestTransportScopeOfOneRoute(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			if strings.HasPrefix(r.URL.Path, "/b/") {
				h.Set("X-RateLimit-Resource", "bee")
			} else {
				h.Set("X-RateLimit-Limit", "6")
				h.Set("X-RateLimit-Remaining", "5")
				h.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10))
			}
			return newResponse(r, 200, h, ""), nil
		})}
		get := func(path string) {
			req, _ := http.NewRequest("GET", "http://api.test"+path, nil)
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			resp.Body.Close()
		}
		get("/a/x") // the key's own bucket learns 6 a minute
		get("/b/x") // names the scope bee for /b
		keys := tr.Stats().Keys
		require.Contains(t, keys, "api.test", "the bucket of the other routes is kept")
		assert.Equal(t, uint64(2), keys["api.test"].Admitted, "both first requests")
		assert.Equal(t, uint64(1), keys["api.test"].Corrections, "what /a's answer taught it")
		assert.Contains(t, keys, "api.test#bee")
	})
}

// TestTransportRescope: a request that waited in the host's bucket while
// the first answer named the route's scope is counted by the scope's bucket
// when it is sent, not by the host's.
func TestTransportRescope(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var calls atomic.Int32
		tr := &Transport{
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if calls.Add(1) == 1 {
					<-release // the first answer comes once the second request waits
				}
				h := http.Header{}
				h.Set("X-RateLimit-Resource", "core")
				return newResponse(r, 200, h, ""), nil
			}),
			Config: Config{Limit: 1, Burst: 1},
		}
		get := func() {
			req, _ := http.NewRequest("GET", "http://api.test/repos/x", nil)
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			resp.Body.Close()
		}
		var wg sync.WaitGroup
		wg.Go(get) // takes the host's only token, then waits for its answer
		synctest.Wait()
		wg.Go(get) // waits a second for the host's next token
		synctest.Wait()
		close(release) // the first answer names the scope "core"
		wg.Wait()
		keys := tr.Stats().Keys
		assert.Equal(t, uint64(1), keys["api.test#core"].Admitted, "the second request moved to the scope's bucket")
		assert.Zero(t, keys["api.test#core"].InFlight)
		assert.Equal(t, int32(2), calls.Load())
	})
}

func TestRouteOf(t *testing.T) {
	tests := []struct{ path, want string }{
		{"/search/issues", "search"},
		{"/repos/o/r", "repos"},
		{"/api/v3/search/code", "search"},
		{"/api/graphql", "graphql"},
		{"/v1/chat/completions", "chat"},
		{"/", ""},
		{"", ""},
		{"/api", "api"},
		{"/vendor/x", "vendor"},
	}
	for _, tt := range tests {
		req := &http.Request{URL: &url.URL{Path: tt.path}}
		if got := routeOf("h", req); got != (routeID{"h", tt.want}) {
			t.Errorf("routeOf(%q) = %+v, want segment %q", tt.path, got, tt.want)
		}
	}
}

// TestTransportLookupPerRoute: requests that take turns among routes (paths
// of one host, and hosts) each find their route's bucket, before and after
// the server names the scope of one of them.
func TestTransportLookupPerRoute(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			if strings.HasPrefix(r.URL.Path, "/search/") {
				h.Set("X-RateLimit-Resource", "search")
			}
			return newResponse(r, 200, h, ""), nil
		})}
		urls := []string{"http://api.test/search/x", "http://api.test/repos/x", "http://api.test/v1/users", "http://other.test/search/x"}
		for range 5 {
			for _, u := range urls {
				req, _ := http.NewRequest("GET", u, nil)
				resp, err := tr.RoundTrip(req)
				require.NoError(t, err)
				resp.Body.Close()
			}
		}
		admitted := map[string]uint64{}
		for name, st := range tr.Stats().Keys {
			admitted[name] = st.Admitted
		}
		// Each host's first /search request went to the host's bucket and
		// named the scope; the other four went to the scope's.
		assert.Equal(t, map[string]uint64{"api.test": 11, "api.test#search": 4, "other.test": 1, "other.test#search": 4}, admitted)
	})
}
