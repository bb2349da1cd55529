package realworld

import "fmt"

// A Target is what throttle should achieve against a class of servers: at
// most Max429 of the answers 429, and at least MinUsed of the quota used.
// Used is [Result.Used] (burst included), or [Result.UsedOfRate] when OfRate
// is set: against a server that sends no headers nothing tells the client
// its burst.
//
// The tests assert the targets only when REALWORLD_STRICT=1: they are where
// the server model is going, not where it is.
type Target struct {
	Client  Client
	Headers bool    // the servers that send rate-limit headers, or those that do not
	Max429  float64 // largest share of the answers that may be 429
	MinUsed float64 // smallest share of the quota used
	OfRate  bool    // MinUsed is of the steady rate, burst left out
}

// Targets returns the targets, one per client kind and class of server.
// Kinds and classes without one (XRate, NoLimit) are not held to any.
func Targets() []Target {
	return []Target{
		{Client: ZeroConfig, Headers: true, Max429: 0.01, MinUsed: 0.90},
		{Client: ZeroConfig, Headers: false, Max429: 0.05, MinUsed: 0.85, OfRate: true},
		{Client: ToldQuota, Headers: true, Max429: 0.01, MinUsed: 0.95},
		{Client: ToldQuota, Headers: false, Max429: 0.01, MinUsed: 0.95, OfRate: true},
		{Client: FourProcesses, Headers: true, Max429: 0.02, MinUsed: 0.90},
		{Client: FourProcesses, Headers: false, Max429: 0.05, MinUsed: 0.85, OfRate: true},
	}
}

// TargetFor returns the target of a run of client kind c against s, and
// whether there is one.
func TargetFor(s Server, c Client) (Target, bool) {
	for _, t := range Targets() {
		if t.Client == c && t.Headers == (s.Headers != "") {
			return t, true
		}
	}
	return Target{}, false
}

// Meets reports how r falls short of t, or nil if it does not.
func (t Target) Meets(r Result) error {
	used, of := r.Used(), "quota"
	if t.OfRate {
		used, of = r.UsedOfRate(), "steady rate"
	}
	switch {
	case r.Share429() > t.Max429 && used < t.MinUsed:
		return fmt.Errorf("429s %.1f%% of answers, want ≤ %.0f%%; used %.1f%% of the %s, want ≥ %.0f%%",
			100*r.Share429(), 100*t.Max429, 100*used, of, 100*t.MinUsed)
	case r.Share429() > t.Max429:
		return fmt.Errorf("429s %.1f%% of answers, want ≤ %.0f%%", 100*r.Share429(), 100*t.Max429)
	case used < t.MinUsed:
		return fmt.Errorf("used %.1f%% of the %s, want ≥ %.0f%%", 100*used, of, 100*t.MinUsed)
	}
	return nil
}
