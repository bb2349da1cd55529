package throttle

import (
	"net/http"
	"slices"
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

// flying is the sequence numbers of the requests in flight, in order. Of
// those admitted before an answered request, the ones still in flight when
// it is answered are the ones the server may not have counted yet
// (overtaken on the way): flying tells how many, where the in-flight count
// alone only bounds them (a burst of answers folded in another order than
// the server counted them raised the cap by the difference: Bucket4j's
// bucket in the kit, refused once in a hundred runs).
type flying []float64

// add records a flight numbered seq. Admissions are numbered in order, so
// it goes last, but for one admitted on the lock-free path, whose number
// is read just after.
func (f *flying) add(seq float64) {
	i := len(*f)
	for i > 0 && (*f)[i-1] > seq {
		i--
	}
	*f = slices.Insert(*f, i, seq)
}

// remove takes out a flight numbered seq and reports whether there was one
// (a Flight done twice is not).
func (f *flying) remove(seq float64) bool {
	i, ok := slices.BinarySearch(*f, seq)
	if ok {
		*f = slices.Delete(*f, i, i+1)
	}
	return ok
}

// before returns how many flights are numbered below seq.
func (f flying) before(seq float64) float64 {
	i, _ := slices.BinarySearch(f, seq)
	return float64(i)
}

// fly records a flight admitted as sequence number seq on a path that does
// not hold the lock.
func (b *Bucket) fly(seq uint64) {
	b.mu.Lock()
	b.flyLocked(seq)
	b.mu.Unlock()
}

// flyLocked records a flight admitted as sequence number seq.
func (b *Bucket) flyLocked(seq uint64) {
	b.flying.add(float64(seq))
	b.inflight.Add(1)
}

// landLocked records the end of the flight numbered seq, done or never sent,
// and reports whether it was in flight.
func (b *Bucket) landLocked(seq float64) bool {
	if !b.flying.remove(seq) {
		return false
	}
	b.inflight.Add(-1)
	return true
}
