package throttle

import "time"

// Tuning of the model, in one place.
const (
	// safety is the share of a refilling server's steady rate that the cap
	// grows by and that the pace never falls below.
	safety = 0.95
	// minHorizon is the shortest time what is left in a window is spread
	// over.
	minHorizon = float64(50 * time.Millisecond)
	// coarseSlack is the uncertainty of a whole-second reset: truncated,
	// rounded or rounded up, and anchored to a Date of one-second resolution.
	coarseSlack = float64(time.Second)
	// toldEdge is the share of a rate told that a server which states
	// nothing is paced at, once it has served edgeServed or more at that
	// rate (nearEdge).
	toldEdge   = 0.99
	edgeServed = 8
	// smallBurst is the burst while pacing at a server's steady rate: the
	// pace, not the bucket's capacity, is what such a server refills.
	smallBurst = 2
	// discoverAnswers is how many answers a server that states nothing
	// gives, one request at a time, before requests go out together.
	discoverAnswers = 64
	// minShare bounds the share estimate from below: however many clients
	// share a quota, this one keeps a trickle (and so keeps learning).
	minShare = 1.0 / 32
)
