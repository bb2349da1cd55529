package realworld

import (
	"time"

	"golang.org/x/time/rate"
)

// A Quota is what a server truly enforces, as configured, whatever its
// headers say: Limit requests per Window, and Burst requests that a fresh
// server admits at once on top of that steady rate.
//
// Burst is the bucket's capacity for a GCRA or token bucket, 1 + burst for
// nginx's leaky bucket (the first request leaves the bucket empty), and 0 for
// windows: a fixed window of Limit admits Limit × ⌈D/Window⌉ in D, which
// [Quota.Capacity] matches when D is a whole number of windows, and a fresh
// sliding-window counter admits Limit × D/Window once D ≥ Window (its first
// window's Limit weighs on the second).
type Quota struct {
	Limit  int           // requests per Window
	Window time.Duration // the period of Limit
	Burst  int           // admitted at once by a fresh server, beyond the steady rate
}

// Rate is the steady rate, Limit ÷ Window, in requests per second.
func (q Quota) Rate() rate.Limit {
	return rate.Limit(float64(q.Limit) / q.Window.Seconds())
}

// Steady is what the steady rate alone admits in d: Limit × d/Window.
func (q Quota) Steady(d time.Duration) float64 {
	return float64(q.Limit) * d.Seconds() / q.Window.Seconds()
}

// Capacity is the most a fresh server admits in d to a client that starts
// with it: Limit × d/Window + Burst.
func (q Quota) Capacity(d time.Duration) float64 {
	return q.Steady(d) + float64(q.Burst)
}
