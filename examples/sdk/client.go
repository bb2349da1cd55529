package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/go-throttle/throttle"
)

// Client is a small SDK for the quote service, a line protocol over TCP
// (see server.go). It is safe for concurrent use: all of its calls share one
// throttle.Bucket, which learns the service's quota from the fields of every
// reply, so that the SDK's users stay inside it however many goroutines call.
type Client struct {
	addr   string
	dialer net.Dialer
	bucket *throttle.Bucket
}

// NewClient returns a client of the quote service at addr.
func NewClient(addr string) *Client {
	return &Client{
		addr: addr,
		// Limit 0: learn the quota from the service. Until the first reply,
		// one call goes out and the others wait for what it teaches.
		bucket: throttle.NewBucket(throttle.Config{Name: "quotes"}),
	}
}

// BusyError is returned when the service refused a call for being over its
// quota. The bucket has already put every caller into a cooldown.
type BusyError struct {
	RetryAfter time.Duration
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("quote service busy: retry after %v", e.RetryAfter)
}

// Quote returns the price of symbol. It waits, in FIFO order with the
// client's other callers, for the quota to allow the call; if ctx's deadline
// is too near for that, it fails at once with an error matching
// throttle.ErrWaitTooLong.
func (c *Client) Quote(ctx context.Context, symbol string) (float64, error) {
	f, err := c.bucket.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("quote %s: %w", symbol, err)
	}
	r, err := c.call(ctx, "QUOTE "+symbol)
	if err != nil {
		f.Done(nil) // no reply: nothing learned, and the call is no longer in flight
		return 0, fmt.Errorf("quote %s: %w", symbol, err)
	}
	// Hand the bucket what the service said, in the terms of HTTP: a
	// status and a throttle.Quota.
	f.DoneQuota(r.status, r.quota)
	if r.status != statusOK {
		return 0, &BusyError{RetryAfter: r.quota.RetryAfter}
	}
	return r.price, nil
}

// Stats returns the client's bucket statistics.
func (c *Client) Stats() throttle.BucketStats { return c.bucket.Stats() }

// The statuses of replies, as HTTP status codes for Flight.DoneQuota.
const (
	statusOK   = 200 // "OK"
	statusBusy = 429 // "BUSY"
)

type reply struct {
	status int
	price  float64
	quota  throttle.Quota
}

// call sends one request line and reads the reply line.
func (c *Client) call(ctx context.Context, line string) (reply, error) {
	conn, err := c.dialer.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return reply{}, err
	}
	defer conn.Close()
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()

	if _, err := fmt.Fprintf(conn, "%s\n", line); err != nil {
		return reply{}, err
	}
	s, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		if ctx.Err() != nil {
			return reply{}, ctx.Err()
		}
		return reply{}, err
	}
	return parseReply(strings.TrimSpace(s))
}

// parseReply parses "OK <price> <fields>" or "BUSY <fields>", where the
// fields are limit=<n> remaining=<n> reset=<unix ms> window=<ms>
// [retry=<ms>].
func parseReply(s string) (reply, error) {
	words := strings.Fields(s)
	if len(words) == 0 {
		return reply{}, errors.New("empty reply")
	}
	// Quota's "not said" values are negative (counts) and zero (times):
	// start from those, not from the zero Quota, whose Remaining 0 would
	// say that the quota is spent.
	r := reply{quota: throttle.Quota{Limit: -1, Remaining: -1}}
	switch words[0] {
	case "OK":
		if len(words) < 2 {
			return reply{}, fmt.Errorf("reply %q: no price", s)
		}
		p, err := strconv.ParseFloat(words[1], 64)
		if err != nil {
			return reply{}, fmt.Errorf("reply %q: %w", s, err)
		}
		r.status, r.price, words = statusOK, p, words[2:]
	case "BUSY":
		r.status, words = statusBusy, words[1:]
	default:
		return reply{}, fmt.Errorf("reply %q: unknown status", s)
	}
	for _, w := range words {
		k, v, _ := strings.Cut(w, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return reply{}, fmt.Errorf("reply %q: bad field %q", s, w)
		}
		switch k {
		case "limit":
			r.quota.Limit = float64(n)
		case "remaining":
			r.quota.Remaining = float64(n)
		case "reset":
			r.quota.Reset = time.UnixMilli(n)
		case "window":
			r.quota.Window = time.Duration(n) * time.Millisecond
		case "retry":
			r.quota.RetryAfter = time.Duration(n) * time.Millisecond
		}
	}
	return r, nil
}
