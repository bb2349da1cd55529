package throttletest

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// FuzzCounter drives a counter of every algorithm and option with arbitrary
// request times and checks what must hold of every answer:
//
//   - remaining is within [0, stated limit] (a TokenBucket whose Burst is
//     above its Limit: [0, Burst]), and the reset is not past;
//   - a LeakyBucket's delay is within the time its burst takes to leak;
//   - a refusal's retry is positive and, except for SlidingWindow (whose
//     retry is the window's end, as real servers send it), exact: a request
//     at e+retry is admitted, and at 1ns earlier it is not; with a Block,
//     the block's end.
//
// Each byte of steps is the time since the previous request, in 64ths of
// the window.
func FuzzCounter(f *testing.F) {
	// Seeded from the quotas of the counter tests.
	f.Add(byte(FixedWindow), byte(AlignStart), false, false, uint16(3), uint16(0), uint32(1000), uint32(0), uint16(0), []byte{0, 0, 0, 0, 63, 1, 160})
	f.Add(byte(FixedWindow), byte(AlignStart), false, false, uint16(2), uint16(0), uint32(1000), uint32(300), uint16(0), []byte{0, 0, 0, 19, 64, 154})
	f.Add(byte(FixedWindow), byte(AlignFirstRequest), false, false, uint16(2), uint16(0), uint32(1000), uint32(0), uint16(0), []byte{16, 41, 6, 16, 182})
	f.Add(byte(SlidingWindow), byte(AlignStart), false, false, uint16(10), uint16(0), uint32(1000), uint32(0), uint16(0), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 16, 0, 0, 80})
	f.Add(byte(SlidingWindow), byte(AlignFirstRequest), true, false, uint16(10), uint16(0), uint32(1000), uint32(0), uint16(0), []byte{32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 77, 0, 0, 45, 19})
	f.Add(byte(SlidingWindow), byte(AlignClock), true, true, uint16(10), uint16(0), uint32(1000), uint32(970), uint16(0), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 1, 3, 7})
	f.Add(byte(TokenBucket), byte(AlignStart), false, false, uint16(3), uint16(0), uint32(1000), uint32(0), uint16(0), []byte{0, 0, 0, 0, 21, 1})
	f.Add(byte(GCRA), byte(AlignStart), false, false, uint16(10), uint16(4), uint32(1000), uint32(0), uint16(0), []byte{0, 0, 0, 0, 0, 16, 0, 0, 255})
	f.Add(byte(LeakyBucket), byte(AlignStart), false, false, uint16(2), uint16(3), uint32(1000), uint32(0), uint16(0), []byte{0, 0, 0, 0, 32, 96, 24})
	f.Add(byte(LeakyBucket), byte(AlignStart), false, true, uint16(60), uint16(1), uint32(60000), uint32(0), uint16(0), []byte{0, 1, 1})
	f.Add(byte(SlidingLog), byte(AlignStart), false, false, uint16(3), uint16(0), uint32(1000), uint32(0), uint16(0), []byte{0, 13, 13, 6, 32, 6, 26, 0, 0, 64})
	f.Add(byte(SlidingLog), byte(AlignStart), true, false, uint16(2), uint16(0), uint32(1000), uint32(0), uint16(0), []byte{0, 0, 19, 19, 19, 6, 64})
	// A block of a Window after a refusal (NestJS's throttler).
	f.Add(byte(SlidingLog), byte(AlignStart), false, false, uint16(3), uint16(0), uint32(1000), uint32(0), uint16(1000), []byte{0, 0, 0, 6, 32, 32, 6, 0, 64})
	f.Add(byte(FixedWindow), byte(AlignFirstRequest), true, false, uint16(2), uint16(0), uint32(1000), uint32(0), uint16(300), []byte{0, 0, 0, 19, 64, 1})
	// NestJS's: a log whose reset is a record's, and a block.
	f.Add(byte(SlidingLog), byte(AlignFirstRequest), false, false, uint16(3), uint16(0), uint32(1000), uint32(0), uint16(1000), []byte{13, 0, 6, 32, 32, 6, 0, 64})
	// option is the algorithm's second option: RoundEstimate for a
	// SlidingWindow, NoDelay for a LeakyBucket. countRefused is
	// CountRefused, for a SlidingWindow or a SlidingLog; blockMs is Block,
	// for any algorithm.
	f.Fuzz(func(t *testing.T, alg, align byte, countRefused, option bool, limit, burst uint16, windowMs, offsetMs uint32, blockMs uint16, steps []byte) {
		q := Quota{
			Limit:     int(limit),
			Window:    time.Duration(windowMs) * time.Millisecond,
			Algorithm: Algorithm(alg % 6),
			Burst:     int(burst),
			Block:     time.Duration(blockMs) * time.Millisecond,
		}
		if !q.Algorithm.bucket() {
			q.Burst = 0
		}
		if a := Alignment(align % 3); q.Algorithm.windowed() || q.Algorithm == SlidingLog && a == AlignFirstRequest {
			q.Align = a
		}
		q.CountRefused = countRefused && (q.Algorithm == SlidingWindow || q.Algorithm == SlidingLog)
		q.RoundEstimate = option && q.Algorithm == SlidingWindow
		q.NoDelay = option && q.Algorithm == LeakyBucket
		q = q.normalize()
		offset := time.Duration(offsetMs) * time.Millisecond % q.Window
		c := newCounter(q, offset)
		if len(steps) > 256 {
			steps = steps[:256]
		}
		var e time.Duration
		for i, b := range steps {
			e += time.Duration(b) * (q.Window / 64)
			c.advance(e)
			ok := c.allows(e)
			if ok {
				c.take()
			} else {
				c.refuse(e)
			}
			remaining, reset, retry := c.report(e)
			if top := max(c.stated(), c.burst); remaining < 0 || remaining > top {
				t.Fatalf("step %d at %v (%+v): remaining %d, want within [0, %d]", i, e, q, remaining, top)
			}
			if reset < e {
				t.Fatalf("step %d at %v (%+v): reset %v is past", i, e, q, reset)
			}
			if ok {
				maxDelay := time.Duration(ceilDiv((c.burst-1)*c.w, c.limit)) * c.unit
				if d := c.delay(); d < 0 || d > maxDelay {
					t.Fatalf("step %d at %v (%+v): delay %v, want within [0, %v]", i, e, q, d, maxDelay)
				}
				continue
			}
			if retry <= 0 {
				t.Fatalf("step %d at %v (%+v): refused with retry %v", i, e, q, retry)
			}
			if q.Algorithm == SlidingWindow {
				continue
			}
			later := *c
			if later.advance(e + retry); !later.allows(e + retry) {
				t.Fatalf("step %d at %v (%+v): refused at e+retry = %v", i, e, q, e+retry)
			}
			if c.unit == 1 && retry > 1 {
				early := *c
				if early.advance(e + retry - 1); early.allows(e + retry - 1) {
					t.Fatalf("step %d at %v (%+v): admitted 1ns before e+retry = %v", i, e, q, e+retry)
				}
			}
		}
	})
}

// FuzzChatBody sends arbitrary bodies to a handler with token quotas and
// checks that each is answered 200, 429 or 400, that a 400 is counted
// against no quota, and that the tokens counted never go negative nor
// beyond what the quotas can hold over the time elapsed.
func FuzzChatBody(f *testing.F) {
	// Seeded from the bodies of the token quota tests.
	f.Add([]byte(`{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"word word word word word word word word "}]}`), byte(0))
	f.Add([]byte(`{"max_tokens":-1}`), byte(1))
	f.Add([]byte(`not json`), byte(0))
	f.Add([]byte(`{"max_completion_tokens":5,"messages":[{"content":[{"type":"text","text":"hi"}]}],"system":"be brief"}`), byte(1))
	f.Add([]byte(`{"max_tokens":9223372036854775807,"messages":[{"content":"x"}]}`), byte(0))
	f.Add([]byte(`{"max_tokens":9223372036854775807,"messages":[{"content":"x"}]}`), byte(1))
	f.Fuzz(func(t *testing.T, body []byte, dialect byte) {
		c := Config{Dialect: OpenAI, Tokens: []TokenQuota{{Name: "tokens", Quota: Quota{Limit: 1000, Window: time.Minute}}}}
		if dialect%2 == 1 {
			c.Dialect = Anthropic
			c.Tokens = []TokenQuota{
				{Name: "output-tokens", Quota: Quota{Limit: 1000, Window: time.Minute, Algorithm: TokenBucket}},
				{Name: "tokens", Quota: Quota{Limit: 1000, Window: time.Minute, Algorithm: GCRA}},
			}
		}
		h := NewHandler(c)
		for range 3 {
			before := h.Stats().Total()
			req := httptest.NewRequest("POST", "http://api.test/v1/messages", bytes.NewReader(body))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			switch rec.Code {
			case http.StatusOK, http.StatusTooManyRequests:
			case http.StatusBadRequest:
				if h.Stats().Total() != before {
					t.Fatalf("a 400 was counted: %+v", h.Stats())
				}
			default:
				t.Fatalf("status %d for %q", rec.Code, body)
			}
			for name, n := range h.Stats().Tokens {
				if n < 0 || n > 3000 {
					t.Fatalf("%s counted %d tokens after at most 3 requests against a quota of 1000", name, n)
				}
			}
		}
	})
}
