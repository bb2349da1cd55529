package otelthrottle

import (
	"net/http"
	"strings"
	"testing"

	"github.com/go-throttle/throttle"
)

// FuzzSplit checks split against the names a Transport gives its buckets:
// any key comes back whole, with and without a scope after it, and no
// name makes split panic.
func FuzzSplit(f *testing.F) {
	for _, tc := range splitCases {
		f.Add(tc.key, tc.scope)
	}
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	f.Fuzz(func(t *testing.T, key, scope string) {
		split(key) // any string: no panic
		if key == "" {
			return // not throttled: no bucket
		}
		tr := &throttle.Transport{Base: base, Key: func(*http.Request) string { return key }}
		req, _ := http.NewRequest("GET", "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var name string
		for n := range tr.Stats().Keys {
			name = n
		}
		if k, s := split(name); k != key || s != "" {
			t.Fatalf("split(%q) = %q, %q; want %q, \"\"", name, k, s, key)
		}
		// A scope follows the escaped key after a '#', as is.
		if k, s := split(name + "#" + scope); k != key || s != scope {
			t.Fatalf("split(%q) = %q, %q; want %q, %q", name+"#"+scope, k, s, key, scope)
		}
		if strings.Contains(name, "#") && !strings.Contains(key, "#") {
			t.Fatalf("name %q of key %q has a '#' of its own", name, key)
		}
	})
}
