package throttle

// The plan is what the server model (model.go) hands the gate (gate.go)
// after each answer, and the gate enforces until the next.

// A plan is what the gate enforces after an answer.
type plan struct {
	// rate is the pace in tokens per second; 0 keeps the gate's rate, +Inf
	// is no local limit. The gate bounds it by the configured ceiling.
	rate float64
	// burst, when positive, replaces the default burst (a second's worth
	// of the rate): the window's quota for PaceBurst, a small one while
	// pacing at the steady rate.
	burst int
	// The cap: no request whose sequence number exceeds
	// capBase + capGrow·(t − capAt) goes out at t before capEnd, less the
	// requests admitted before capRef (the answered request's number) that
	// are still unanswered. capOn false is no cap; capEnd never is a cap
	// that only growth lifts (a real end: none).
	capOn                    bool
	capAt, capEnd            instant
	capBase, capGrow, capRef float64
	// tickProbe: capEnd is a probe between a server's ticks (probeTick).
	tickProbe bool
	// hold, if holdOn: nothing goes out before it. After a hold, and after
	// a cap's end, one request goes alone and the rest wait for its answer.
	hold   instant
	holdOn bool
	// alone: requests go one at a time, each after the last one's answer
	// (finding out how much a server that states nothing takes at once).
	alone bool
	// flights, when positive, is how many requests may be in flight at
	// once (startFlights).
	flights int
	// paceFirst: the answered request, sent at firstSent while the bucket
	// had no rate, spent a token at the plan's rate (firstPace).
	firstSent instant
	paceFirst bool
	// spare, when positive, is how many tokens a bucket-like server holds
	// idle beyond a small reserve while the configured ceiling keeps the
	// rate below what would spend them: the gate may admit them at once.
	spare float64
}

// capSeq returns the cap's highest sequence number at t.
func (p plan) capSeq(t instant) float64 {
	return p.capBase + p.capGrow*max(t.sub(p.capAt), 0)
}
