package throttle

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// FuzzGate drives a Transport with a Meter with requests of arbitrary
// costs arriving at arbitrary gaps, and checks the gate's invariants: a
// request is refused only for a cost above a burst; the others go out in
// the order they arrived; and over every span of time neither bucket sends
// more than its burst and its rate allow. Each op is three bytes: the
// token cost (0-127; above the burst of 100 is refused), the request
// quota's cost (0-3) and the gap before the next arrival (ms, 0-255).
func FuzzGate(f *testing.F) {
	f.Add([]byte{10, 1, 0, 10, 1, 0, 10, 1, 0, 10, 1, 0}) // the requests bind
	f.Add([]byte{100, 1, 0, 100, 1, 0, 100, 1, 0})        // the tokens bind
	f.Add([]byte{100, 1, 0, 10, 1, 0, 100, 1, 0})         // each in turn
	f.Add([]byte{120, 1, 5, 0, 0, 0, 50, 3, 200, 100, 2, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 3*40 {
			ops = ops[:3*40]
		}
		synctest.Test(t, func(t *testing.T) { checkGate(t, ops) })
	})
}

// A gateSend is one request of FuzzGate.
type gateSend struct {
	tokens, reqs int
	at           time.Duration // when it was sent; -1: refused
}

func checkGate(t *testing.T, ops []byte) {
	const tokRate, tokBurst, reqRate, reqBurst = 100.0, 100, 5.0, 3
	start := time.Now()
	var mu sync.Mutex
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return newResponse(r, http.StatusOK, nil, "ok"), nil
	})
	tr := &Transport{
		Base:   base,
		Config: Config{Limit: tokRate, Burst: tokBurst, MaxWait: -1},
		Unit:   "tokens",
		Meters: []Meter{{
			Unit:   "requests",
			Config: Config{Limit: reqRate, Burst: reqBurst},
			Cost:   func(r *http.Request) int { return int(r.Header.Get("X-Reqs")[0] - '0') },
		}},
	}
	var sends []*gateSend
	var wg sync.WaitGroup
	for i := 0; i+2 < len(ops); i += 3 {
		s := &gateSend{tokens: int(ops[i] & 127), reqs: int(ops[i+1] % 4)}
		sends = append(sends, s)
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(WithCost(context.Background(), s.tokens), "GET", "http://api.test/x", nil)
			req.Header.Set("X-Reqs", string(rune('0'+s.reqs)))
			resp, err := tr.RoundTrip(req)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				resp.Body.Close()
				s.at = time.Since(start)
			case errors.Is(err, ErrExceedsBurst) && (s.tokens > tokBurst || s.reqs > reqBurst):
				s.at = -1
			default:
				t.Errorf("request of %d tokens, %d requests: %v", s.tokens, s.reqs, err)
			}
		})
		synctest.Wait() // arrived, in this order
		time.Sleep(time.Duration(ops[i+2]) * time.Millisecond)
	}
	wg.Wait()
	var sent []*gateSend
	for i, s := range sends {
		if s.at < 0 {
			continue
		}
		if len(sent) > 0 && s.at < sent[len(sent)-1].at {
			t.Fatalf("request %d (%d tokens, %d requests) sent at %v, before the one that arrived before it (%v)", i, s.tokens, s.reqs, s.at, sent[len(sent)-1].at)
		}
		sent = append(sent, s)
	}
	conform(t, "tokens", sent, func(s *gateSend) int { return s.tokens }, tokRate, tokBurst)
	conform(t, "requests", sent, func(s *gateSend) int { return s.reqs }, reqRate, reqBurst)
}

// conform fails t if the costs sent over a span of time exceed burst plus
// rate times its length: the token bucket's bound.
func conform(t *testing.T, name string, sent []*gateSend, cost func(*gateSend) int, rate float64, burst int) {
	t.Helper()
	sent = append([]*gateSend(nil), sent...)
	sort.SliceStable(sent, func(i, j int) bool { return sent[i].at < sent[j].at })
	for i := range sent {
		total := 0
		for j := i; j < len(sent); j++ {
			total += cost(sent[j])
			span := (sent[j].at - sent[i].at).Seconds()
			if float64(total) > float64(burst)+rate*span+1e-6 {
				t.Fatalf("%s: %d sent in %.3fs from %v: more than the burst %d and %.0f/s allow", name, total, span, sent[i].at, burst, rate)
			}
		}
	}
}
