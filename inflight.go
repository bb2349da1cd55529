package throttle

import (
	"net/http"
	"strings"
	"time"
)

// unitConcurrent is the IETF quota unit of a concurrency quota
// (draft-ietf-httpapi-ratelimit-headers §3.1.2, "concurrent-requests"):
// its quota is how many requests may be in flight at once.
const unitConcurrent = "concurrent-requests"

// The in-flight limit is the least of Config.MaxInFlight, the concurrency
// quota a server states and the server model's (plan.flights), 0 when none
// says. It is kept in Bucket.flightCap, an atomic so that Begin can tell
// without the lock whether the lock-free path may admit it; cfgFlights,
// srvFlights and modelFlights, those it is the least of, are guarded by
// Bucket.mu.

// flightsFull reports whether another flight must wait for one in flight to
// end. The in-flight count only falls between this check and an admission
// made under Bucket.mu, since flights begin under it when a limit is set.
func (b *Bucket) flightsFull() bool {
	m := b.flightCap.Load()
	return m > 0 && b.inflight.Load() >= m
}

// limitFlightsLocked records the concurrency quota a server states (limit
// requests in flight at once; < 1: not stated) and re-plans. It requires
// the state owned.
func (b *Bucket) limitFlightsLocked(now instant, limit float64) {
	if limit < 1 {
		return
	}
	b.srvFlights = int64(min(limit, 1<<40))
	b.capFlightsLocked(now)
}

// capFlightsLocked sets flightCap to the least of the limits that are set
// and re-plans if it changed.
func (b *Bucket) capFlightsLocked(now instant) {
	m := int64(0)
	for _, l := range []int64{b.cfgFlights, b.srvFlights, b.modelFlights} {
		if l > 0 && (m == 0 || l < m) {
			m = l
		}
	}
	if b.flightCap.Swap(m) != m {
		b.replanLocked(now)
	}
}

// limitFlights reads the concurrency quota of the headers of an answer that
// arrived at arrived, if they state one.
func (b *Bucket) limitFlights(h http.Header, arrived time.Time) {
	q, ok := concurrencyQuota(h, arrived)
	if !ok {
		return
	}
	defer b.emit()
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.ownLocked()
	b.limitFlightsLocked(now, q.Limit)
	b.releaseLocked(now)
}

// concurrencyQuota returns the concurrency quota h states, if it states one:
// an IETF policy whose unit is "concurrent-requests". Only a response whose
// RateLimit-Policy names that unit is parsed again for it: the scan keeps
// BenchmarkTransportOverhead's IETF case from parsing every answer twice
// (+50% before it).
func concurrencyQuota(h http.Header, now time.Time) (Quota, bool) {
	named := false
	for _, v := range h["Ratelimit-Policy"] { // the canonical key: no allocation
		named = named || strings.Contains(v, unitConcurrent)
	}
	if !named {
		return Quota{}, false
	}
	for _, q := range ParseQuotas(h, now) {
		if strings.EqualFold(q.Unit, unitConcurrent) && q.Limit >= 1 {
			return q, true
		}
	}
	return Quota{}, false
}
