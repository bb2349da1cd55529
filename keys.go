package throttle

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
)

// UserKey returns a [Transport.Key] that gives every pair of host and user
// its own bucket, for servers that count a quota per user, API key,
// installation or tenant rather than per client: user names whom the
// server counts a request against. The key is the host, a '/', and the
// user ("api.example.com/tenant-42"; hosts hold no '/', so no two pairs
// share a key). A request for which user returns "" uses the host's own
// bucket, as with no Key.
//
// Keys name buckets in [TransportStats], events, logs and a [Store]: user
// must not return a secret. For a credential such as an API key, use
// [HeaderDigest], which names it by a digest.
//
// A bucket lives while it is used: one per host and active user, each
// dropped once idle for [Transport.IdleTimeout], as for every key. So memory
// follows the users of the last idle timeout, not every user ever seen.
func UserKey(user func(*http.Request) string) func(*http.Request) string {
	return func(req *http.Request) string {
		if req.URL == nil {
			return ""
		}
		if u := user(req); u != "" {
			return req.URL.Host + "/" + u
		}
		return req.URL.Host
	}
}

// HeaderDigest returns a function, for [UserKey], that names the caller by
// the first 16 hex digits of the SHA-256 of the request's header name
// ("Authorization", "X-Api-Key"): requests with the same credential share a
// bucket, and the credential appears in no key. It returns "" when the
// header is absent or empty.
func HeaderDigest(name string) func(*http.Request) string {
	return func(req *http.Request) string {
		v := req.Header.Get(name)
		if v == "" {
			return ""
		}
		sum := sha256.Sum256([]byte(v))
		return hex.EncodeToString(sum[:8])
	}
}
