package throttle

import (
	"net/http"
	"strings"
	"time"
)

// DefaultIdleTimeout is how long a Transport keeps the bucket of a key that
// sees no requests when Transport.IdleTimeout is zero.
const DefaultIdleTimeout = 10 * time.Minute

// A bucketID names a Transport's bucket: a key, and the scope the server
// named ("" for the key's own bucket). Struct keys spare a string per
// request.
type bucketID struct{ key, scope, unit string }

// name names the bucket in Stats, events, errors and a Store: the key, with
// each '\' or '#' in it escaped by a '\', then "#" and the scope (escaped
// alike) for a server-named scope, and "##" and the unit for a Meter's
// bucket ("api.openai.com##requests", "api.github.com#search##requests"). The escape keeps the names of
// different buckets apart (the key "h#core" is not the key "h" in its scope
// "core") and leaves every host as it is.
func (id bucketID) name() string {
	name := escapeName(id.key)
	if id.scope != "" {
		name += "#" + escapeName(id.scope)
	}
	if id.unit != "" {
		name += "##" + escapeName(id.unit)
	}
	return name
}

// escapeName escapes each '\' and '#' of s by a '\'.
func escapeName(s string) string {
	if !strings.ContainsAny(s, `\#`) {
		return s
	}
	var sb strings.Builder
	for i := range len(s) {
		if c := s[i]; c == '\\' || c == '#' {
			sb.WriteByte('\\')
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// A routeID is what a server's scope is remembered for: a key and the first
// meaningful segment of the path.
type routeID struct{ key, seg string }

// An entry is a Transport's bucket. Its fields are guarded by
// Transport.mu.
type entry struct {
	id   bucketID
	b    *Bucket
	used instant // last looked up, on the buckets' clock
}

// key returns the key of req's bucket: Transport.Key's, else the host.
func (t *Transport) key(req *http.Request) string {
	if t.Key != nil {
		return t.Key(req)
	}
	if req.URL == nil {
		return ""
	}
	return req.URL.Host
}

// routeOf names what a server's scope is remembered for: the key and the
// first segment of the path ("search" of "/search/issues"), which is how
// GitHub divides its resources. Leading "api" and version segments are
// skipped, so that GitHub Enterprise's "/api/v3/search/..." is "search".
func routeOf(key string, req *http.Request) routeID {
	p := ""
	if req.URL != nil {
		p = req.URL.Path
	}
	for {
		p = strings.TrimPrefix(p, "/")
		seg, rest, _ := strings.Cut(p, "/")
		if rest == "" || !(seg == "api" || isVersion(seg)) {
			return routeID{key, seg}
		}
		p = rest
	}
}

// isVersion reports whether a path segment is an API version: v1, v3, v2024.
func isVersion(seg string) bool {
	if len(seg) < 2 || seg[0] != 'v' {
		return false
	}
	for _, c := range seg[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// bucket returns the bucket for route: the one of the scope the server
// named for it, else its key's own, making it if needed; and the time on
// the buckets' clock, read once for the lookup and the admission.
func (t *Transport) bucket(route routeID) (bucketID, *Bucket, instant) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.tickLocked()
	e := t.routes[route]
	if e == nil {
		// After the sweep, which may forget scopes.
		e = t.getLocked(bucketID{key: route.key, scope: t.scopes[route]}, now)
		t.routes[route] = e
	}
	e.used = now
	return e.id, e.b, now
}

// setScope records that route belongs to scope and returns its bucket.
func (t *Transport) setScope(route routeID, scope string) (bucketID, *Bucket) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.tickLocked()
	if t.scopes == nil {
		t.scopes = make(map[routeID]string)
	}
	t.scopes[route] = scope
	t.scoped.Store(true)
	// The key's own bucket stays: other routes of the key may use it. If
	// none does, sweeps drop it once idle.
	e := t.getLocked(bucketID{key: route.key, scope: scope}, now)
	e.used = now
	t.routes[route] = e
	return e.id, e.b
}

// tickLocked returns the time on the buckets' clock, starting the clock on
// first use (t.epoch is never set again), and sweeps idle buckets when a
// sweep is due. It requires that t.mu is held.
func (t *Transport) tickLocked() instant {
	idle := t.IdleTimeout
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	if t.buckets == nil {
		t.buckets = make(map[bucketID]*entry)
		t.routes = make(map[routeID]*entry)
		t.epoch = time.Now()
	}
	now := sinceEpoch(time.Since(t.epoch))
	if now.sub(t.swept) >= float64(idle/2) {
		t.sweepLocked(now, float64(idle))
	}
	return now
}

// getLocked returns the entry of bucket id, making it if needed, full at
// now. It requires that t.mu is held and tickLocked was called.
func (t *Transport) getLocked(id bucketID, now instant) *entry {
	e := t.buckets[id]
	if e == nil {
		c := t.Config
		if id.unit != "" {
			c = t.meterConfig(id.unit)
		}
		c.Name = id.name()
		e = &entry{id: id, b: newBucket(c, t.epoch, now)}
		if len(t.Meters) > 0 {
			// Set before the bucket is shared: a change to it wakes the
			// head of the key's gate.
			e.b.kick = t.gateLocked(id).kick
		}
		t.buckets[id] = e
	}
	return e
}

// sweepLocked drops the buckets idle for longer than idle (nanoseconds), so
// that memory stays bounded with many hosts. It requires that t.mu is held.
func (t *Transport) sweepLocked(now instant, idle float64) {
	t.swept = now
	clear(t.routes) // resolved again, so that none keeps a dropped bucket
	for k, e := range t.buckets {
		if g := t.gates[bucketID{key: k.key, scope: k.scope}]; g != nil && !g.idle() {
			continue // its requests wait in the key's gate, not in the bucket
		}
		if now.sub(e.used) >= idle && e.b.idle() {
			delete(t.buckets, k)
		}
	}
	if len(t.gates) > 0 {
		live := make(map[bucketID]bool, len(t.buckets))
		for id := range t.buckets {
			live[bucketID{key: id.key, scope: id.scope}] = true
		}
		for id, g := range t.gates {
			if !live[id] && g.idle() { // its buckets, which poke it, are gone
				delete(t.gates, id)
			}
		}
	}
	for route, scope := range t.scopes {
		if _, ok := t.buckets[bucketID{key: route.key, scope: scope}]; !ok {
			delete(t.scopes, route) // its bucket is gone: learn again
		}
	}
}

// idle reports whether nothing depends on the bucket's state: nobody waits,
// nothing is in flight, no cooldown.
func (b *Bucket) idle() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.q.len == 0 && b.inflight.Load() == 0 && b.now() >= b.hold
}
