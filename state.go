package throttle

import (
	"errors"
	"fmt"
	"math"
	"time"

	"golang.org/x/time/rate"
)

// State is what a bucket needs to resume after a restart: its tokens, its
// rate (learned or set), what it learned of the server's window, and any
// cooldown the server imposed. Times are wall-clock, since a monotonic clock
// does not survive the process. Obtain one with [Bucket.Snapshot] and resume
// with [Bucket.Restore]; it marshals to JSON.
//
// Limit means what Config.Limit means: 0 is a rate not known yet (the bucket
// was still learning it), [rate.Inf] no local limit (in JSON its value,
// 1.7976931348623157e+308). In states of Version 1 a Limit of 0 with Learned
// meant no local limit; Restore reads them so.
type State struct {
	Version       int        `json:"version"`
	At            time.Time  `json:"at"` // when the snapshot was taken
	Tokens        float64    `json:"tokens"`
	Limit         rate.Limit `json:"limit"` // tokens/s; 0: not known; rate.Inf: no local limit
	Burst         int        `json:"burst"`
	Learned       bool       `json:"learned"` // the server had answered
	ServerLimit   float64    `json:"server_limit,omitempty"`
	Window        int64      `json:"window_ns,omitempty"`
	CooldownUntil time.Time  `json:"cooldown_until,omitzero"`
	// ProbeMax, when positive, says that the bucket was finding the rate of
	// a server without quota headers, and the rate that drew its last 429.
	ProbeMax float64 `json:"probe_max,omitempty"`
}

// stateVersion is the Version of the states Snapshot takes. Version 1 wrote
// no local limit as a Limit of 0.
const stateVersion = 2

// ErrBadState is matched by the error of a [State] that cannot be restored,
// or a state file that cannot be read.
var ErrBadState = errors.New("throttle: bad saved state")

// Snapshot returns the bucket's state now.
func (b *Bucket) Snapshot() State {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.ownLocked()
	defer b.releaseLocked(now)
	wall := time.Now()
	s := State{
		Version:     stateVersion,
		At:          wall,
		Tokens:      b.tokensNowLocked(now),
		Burst:       b.burst,
		Learned:     !b.learning,
		ServerLimit: max(b.model.srvLimit, 0),
		Window:      int64(min(b.model.winLen, maxDur)), // a float64 of MaxInt64 converts to MinInt64
	}
	if b.limit != rate.Inf || b.ceiling != 0 || b.model.answered {
		s.Limit = b.limit // else the stand-in of a rate not learned yet
	}
	if b.hold > now {
		s.CooldownUntil = wall.Add(time.Duration(b.hold - now))
	}
	if b.model.aimd {
		s.ProbeMax = b.model.rmax
	}
	return s
}

// Restore resumes the bucket from s, accounting for the wall-clock time
// that passed since s was taken: the tokens refill at the saved rate for that
// long but never beyond Burst, so a restarted process does not burst; a
// cooldown still running holds callers until it ends (capped by
// MaxCooldown). A clock that went backwards counts as no time passed. The
// bucket's configured limit stays a ceiling. Queued callers are re-planned.
//
// A state file outlives the program that wrote it, so what it says is
// bounded as the server's word is: no wait it implies exceeds MaxCooldown.
// A saved rate slower than one token per MaxCooldown is read as that rate
// (unless the configured Limit is slower still), and a debt of tokens is
// kept only as far as that rate repays within MaxCooldown. Restore returns
// an error matching [ErrBadState] for a state that no bucket could have
// saved (NaN or negative values, infinite counts or counts beyond 2⁵³, an
// unknown version), and then changes nothing. States of every version so far
// restore (see [State]). A bucket restored from any state
// saves a state that restores.
func (b *Bucket) Restore(s State) error {
	if err := s.validate(); err != nil {
		return err
	}
	if s.Version == 1 && s.Limit == 0 && s.Learned {
		s.Limit = rate.Inf // version 1's no local limit
	}
	defer b.emit()
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.ownLocked()
	defer b.releaseLocked(now)
	wall := time.Now()
	elapsed := max(wall.Sub(s.At), 0)
	// The slowest rate a saved state may impose.
	slowest := rate.Limit(float64(time.Second) / b.maxCooldown)

	if s.Learned {
		b.learning, b.probing = false, 0
		b.model.answered = true
		if s.ServerLimit > 0 {
			b.model.srvLimit = s.ServerLimit
		}
		b.model.winLen = float64(s.Window)
	}
	limit := b.limit
	if s.Limit > 0 && (b.ceiling == 0 || s.Limit < b.ceiling) {
		limit = max(s.Limit, slowest)
		if b.ceiling > 0 {
			limit = min(limit, b.ceiling)
		}
	}
	b.setParamsLocked(now, limit, b.burst) // an automatic burst follows the limit
	if s.ProbeMax > 0 && b.ceiling != rate.Inf {
		// Resume probing the server's rate where it was, growing back
		// from now.
		b.model.aimd, b.model.rmax, b.model.cut = true, max(s.ProbeMax, float64(slowest)), now
	}
	tokens := s.Tokens
	if limit != rate.Inf {
		// A debt is repaid within MaxCooldown: at its end one token is
		// there. Products beyond float64 are +Inf, which leaves it.
		repaid := float64(limit) * b.maxCooldown / float64(time.Second)
		tokens = max(tokens, min(0, 1-repaid)) + elapsed.Seconds()*float64(limit)
	}
	b.setTokensLocked(now, min(tokens, float64(b.burst)))
	if left := s.CooldownUntil.Sub(wall); !s.CooldownUntil.IsZero() && left > 0 {
		b.holdUntilLocked(now, now.add(float64(left)))
	}
	b.replanLocked(now)
	return nil
}

// maxCount bounds the counts of a State: beyond 2⁵³ a float64 no longer
// counts requests one by one, and no server's quota comes near it.
const maxCount = 1 << 53

func (s State) validate() error {
	bad := func(what string) error { return fmt.Errorf("%w: %s", ErrBadState, what) }
	finite := func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
	switch {
	case s.Version < 1 || s.Version > stateVersion:
		return bad(fmt.Sprintf("version %d, want 1 to %d", s.Version, stateVersion))
	case s.At.IsZero():
		return bad("no time")
	case !finite(s.Tokens) || math.Abs(s.Tokens) > maxCount:
		return bad(fmt.Sprintf("tokens %v", s.Tokens))
	case !finite(float64(s.Limit)) || s.Limit < 0:
		return bad(fmt.Sprintf("limit %v", float64(s.Limit)))
	case s.Burst < 0:
		return bad("negative burst")
	case !finite(s.ServerLimit) || s.ServerLimit > maxCount || s.Window < 0:
		return bad(fmt.Sprintf("server window: limit %v in %v", s.ServerLimit, time.Duration(s.Window)))
	case !finite(s.ProbeMax) || s.ProbeMax < 0 || s.ProbeMax > maxCount:
		return bad(fmt.Sprintf("probe rate %v", s.ProbeMax))
	}
	return nil
}
