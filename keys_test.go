package throttle

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUserKey(t *testing.T) {
	key := UserKey(func(r *http.Request) string { return r.Header.Get("X-Tenant") })
	for _, tc := range []struct {
		url, tenant, want string
	}{
		{"https://api.example.com/v1/items", "42", "api.example.com/42"},
		{"https://api.example.com:8443/", "a/b", "api.example.com:8443/a/b"},
		{"https://api.example.com/", "", "api.example.com"},
		{"https://other.example/", "42", "other.example/42"},
	} {
		req, err := http.NewRequest(http.MethodGet, tc.url, nil)
		require.NoError(t, err)
		if tc.tenant != "" {
			req.Header.Set("X-Tenant", tc.tenant)
		}
		assert.Equal(t, tc.want, key(req), "UserKey(X-Tenant %q)(%q)", tc.tenant, tc.url)
	}
	assert.Empty(t, key(&http.Request{}), "no URL: not throttled")
}

func TestHeaderDigest(t *testing.T) {
	digest := HeaderDigest("Authorization")
	req := func(auth string) *http.Request {
		r := &http.Request{URL: &url.URL{Host: "h"}, Header: http.Header{}}
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		return r
	}
	a, a2, b := digest(req("Bearer secret-a")), digest(req("Bearer secret-a")), digest(req("Bearer secret-b"))
	assert.Len(t, a, 16)
	assert.Equal(t, a, a2, "one credential, one name")
	assert.NotEqual(t, a, b)
	assert.NotContains(t, a, "secret")
	assert.Equal(t, "", digest(req("")), "no header: no user")
	// sha256("Bearer secret-a"), first 8 bytes (sha256sum agrees).
	assert.Equal(t, "b9efbc39ab2bbbe3", a)
}

// TestTransportUserKeys: each user of a host has its own bucket, and the
// buckets of users gone idle are dropped as any idle bucket is.
func TestTransportUserKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{
			Base:        roundTripFunc(func(r *http.Request) (*http.Response, error) { return newResponse(r, 200, nil, ""), nil }),
			Config:      Config{Limit: 1, Burst: 1, MaxQueue: -1},
			Key:         UserKey(HeaderDigest("X-Api-Key")),
			IdleTimeout: time.Minute,
		}
		get := func(apiKey string) error {
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/items", nil)
			req.Header.Set("X-Api-Key", apiKey)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		require.NoError(t, get("alice"))
		require.ErrorIs(t, get("alice"), ErrQueueFull, "alice's quota is spent")
		require.NoError(t, get("bob"), "bob has a quota of his own")
		keys := tr.Stats().Keys
		require.Len(t, keys, 2)
		for k := range keys {
			assert.True(t, strings.HasPrefix(k, "api.test/"), "key %q", k)
			assert.NotContains(t, k, "alice")
		}
		time.Sleep(2 * time.Minute)
		require.NoError(t, get("carol"))
		assert.Len(t, tr.Stats().Keys, 1, "alice's and bob's idle buckets are dropped")
	})
}

// TestTransportNewBucketStartsFull: the first request of a new key is
// admitted at once by a bucket of one token that never queues. The bucket is
// made after the lookup read the clock, and was once full only from its own
// later reading, so that the request found it empty. Real time: in a
// synctest bubble both readings are equal.
func TestTransportNewBucketStartsFull(t *testing.T) {
	tr := &Transport{
		Base:   roundTripFunc(func(r *http.Request) (*http.Response, error) { return newResponse(r, 200, nil, ""), nil }),
		Config: Config{Limit: 1, Burst: 1, MaxQueue: -1},
	}
	for i := range 20 {
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://host%d.test/", i), nil)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err, "the first request to host%d.test", i)
		resp.Body.Close()
	}
}
