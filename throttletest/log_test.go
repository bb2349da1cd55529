package throttletest

import (
	"testing"
	"time"
)

// TestCounterSlidingLog checks the log's arithmetic: a request comes back a
// Window after it was logged, the reset is when the log will be empty, and
// Retry-After is when the oldest request that keeps it full leaves it.
func TestCounterSlidingLog(t *testing.T) {
	cases := []counterCase{
		{
			name:  "SlidingLog",
			quota: Quota{Limit: 3, Window: time.Second, Algorithm: SlidingLog},
			steps: []step{
				// Empty: the reset is a Window from now.
				{at: 0, admitted: true, remaining: 2, reset: time.Second},
				{at: 200 * ms, admitted: true, remaining: 1, reset: 1200 * ms},
				{at: 400 * ms, admitted: true, remaining: 0, reset: 1400 * ms},
				// Full: the request at 0 leaves at 1 s; the reset stays.
				{at: 500 * ms, reset: 1400 * ms, retry: 500 * ms},
				// At 1 s it has left (a Window after it was logged, not
				// after): one more, and the reset moves on with it.
				{at: time.Second, admitted: true, remaining: 0, reset: 2 * time.Second},
				{at: 1100 * ms, reset: 2 * time.Second, retry: 100 * ms},
				// 200 ms and 400 ms have left by 1.5 s: two come back at
				// once, one by one as they were sent.
				{at: 1500 * ms, admitted: true, remaining: 1, reset: 2500 * ms},
				{at: 1500 * ms, admitted: true, remaining: 0, reset: 2500 * ms},
				{at: 1500 * ms, reset: 2500 * ms, retry: 500 * ms},
				// Idle past the newest: all of it has come back.
				{at: 2500 * ms, admitted: true, remaining: 2, reset: 3500 * ms},
			},
		},
		{
			// A log that logs its refusals (ZADD, then ZCOUNT): a client
			// that retries faster than the quota's rate once refused
			// stays refused, each refusal a Window in the log.
			name:  "SlidingLog CountRefused",
			quota: Quota{Limit: 2, Window: time.Second, Algorithm: SlidingLog, CountRefused: true},
			steps: []step{
				{at: 0, admitted: true, remaining: 1, reset: time.Second},
				{at: 0, admitted: true, remaining: 0, reset: time.Second},
				{at: 300 * ms, reset: 1300 * ms, retry: 700 * ms},
				{at: 600 * ms, reset: 1600 * ms, retry: 700 * ms},
				{at: 900 * ms, reset: 1900 * ms, retry: 700 * ms},
				// The two admitted have left, the refusals have not.
				{at: time.Second, reset: 2 * time.Second, retry: 900 * ms},
				// A pause of a Window: the refusals have aged out.
				{at: 2 * time.Second, admitted: true, remaining: 1, reset: 3 * time.Second},
			},
		},
		{
			// A log whose reset is a record's (NestJS's throttler): the
			// first request opens it, it ends a Window later, and the
			// first request after that opens the next; the log gates.
			name:  "SlidingLog AlignFirstRequest",
			quota: Quota{Limit: 3, Window: time.Second, Algorithm: SlidingLog, Align: AlignFirstRequest},
			steps: []step{
				{at: 200 * ms, admitted: true, remaining: 2, reset: 1200 * ms},
				{at: 700 * ms, admitted: true, remaining: 1, reset: 1200 * ms},
				{at: 900 * ms, admitted: true, remaining: 0, reset: 1200 * ms},
				{at: 1100 * ms, reset: 1200 * ms, retry: 100 * ms},
				// The record ends as the first request leaves the log.
				{at: 1200 * ms, admitted: true, remaining: 0, reset: 2200 * ms},
				// Idle past a record: the next request opens one.
				{at: 3500 * ms, admitted: true, remaining: 2, reset: 4500 * ms},
			},
		},
		{
			// NestJS's throttler: the request over the limit blocks the
			// quota for Block, whatever the log would give back, and
			// the log starts over when the block ends.
			name:  "SlidingLog Block",
			quota: Quota{Limit: 3, Window: time.Second, Algorithm: SlidingLog, Block: time.Second},
			steps: []step{
				{at: 0, admitted: true, remaining: 2, reset: time.Second},
				{at: 200 * ms, admitted: true, remaining: 1, reset: 1200 * ms},
				{at: 400 * ms, admitted: true, remaining: 0, reset: 1400 * ms},
				// Refused: blocked until 1.5 s, not until 1 s, when the
				// request at 0 leaves the log.
				{at: 500 * ms, reset: 1400 * ms, retry: time.Second},
				// The log has room at 1.1 s; the block refuses, and its
				// refusals are not counted.
				{at: 1100 * ms, reset: 1400 * ms, retry: 400 * ms},
				{at: 1499 * ms, reset: 2499 * ms, retry: ms}, // the log empty by now, the block not
				// Over: the log starts empty.
				{at: 1500 * ms, admitted: true, remaining: 2, reset: 2500 * ms},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, tc.run)
	}
}

// The log keeps only what the last Window logged: a steady client's log
// stays the size of a Window's requests, however long it runs.
func TestSlidingLogKeepsAWindow(t *testing.T) {
	c := newCounter(Quota{Limit: 100, Window: time.Second, Algorithm: SlidingLog}, 0)
	for at := time.Duration(0); at < time.Hour; at += 20 * ms {
		c.advance(at)
		if c.allows(at) {
			c.take()
		}
		if len(c.logged) > 50 {
			t.Fatalf("at %v: %d logged, want at most a Window's 50", at, len(c.logged))
		}
	}
}
