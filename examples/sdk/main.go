// Command sdk shows a hand-written SDK that drives a throttle.Bucket
// directly, for a service whose client is not net/http.
//
// The quote service (server.go) speaks a line protocol over TCP and states
// its quota in every reply: limit, remaining, reset, and retry when it
// refuses. The SDK's Client (client.go) wraps each call in Bucket.Begin and
// Flight.DoneQuota, handing the bucket a throttle.Quota built from those
// fields, so that the bucket learns the quota and corrects itself exactly as
// it does from HTTP headers.
//
// Several goroutines share one Client. Then a caller with a short deadline
// shows admission control: it is refused at once, instead of waiting to time
// out.
//
// Usage:
//
//	go run ./examples/sdk [-workers 4] [-calls 6] [-limit 10] [-window 2s]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/go-throttle/throttle"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "sdk:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("sdk", flag.ContinueOnError)
	fs.SetOutput(stdout)
	workers := fs.Int("workers", 4, "goroutines sharing the client")
	calls := fs.Int("calls", 6, "calls per goroutine")
	limit := fs.Int("limit", 10, "the service's quota: requests per window")
	window := fs.Duration("window", 2*time.Second, "the service's quota window")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	case *workers < 1 || *calls < 1 || *limit < 1:
		return errors.New("-workers, -calls and -limit must be at least 1")
	case *window < 10*time.Millisecond:
		return errors.New("-window must be at least 10ms")
	}

	srv, err := startServer(*limit, *window)
	if err != nil {
		return err
	}
	defer srv.Close()
	client := NewClient(srv.Addr())

	fmt.Fprintf(stdout, "Quote service on %s: %d requests per %v. %d goroutines share one SDK client, %d calls each.\n\n",
		srv.Addr(), *limit, *window, *workers, *calls)

	w := &syncWriter{w: stdout}
	start := time.Now()
	symbols := []string{"GOOG", "ACME", "INIT", "GOPH", "TCPX", "RUNE"}
	var wg sync.WaitGroup
	var failed int
	var mu sync.Mutex
	for i := range *workers {
		wg.Go(func() {
			for n := range *calls {
				sym := symbols[(i+n)%len(symbols)]
				p, err := client.Quote(ctx, sym)
				at := time.Since(start).Seconds()
				if err != nil {
					mu.Lock()
					failed++
					mu.Unlock()
					fmt.Fprintf(w, "  %5.2fs  worker %d  %-4s  error: %v\n", at, i, sym, err)
					continue
				}
				fmt.Fprintf(w, "  %5.2fs  worker %d  %-4s  %8.2f\n", at, i, sym, p)
			}
		})
	}

	// While the workers queue, a caller that cannot wait long.
	time.Sleep(100 * time.Millisecond)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	t0 := time.Now()
	_, err = client.Quote(short, "FAST")
	cancel()
	switch {
	case errors.Is(err, throttle.ErrWaitTooLong):
		fmt.Fprintf(w, "  %5.2fs  a caller with a 50ms deadline was refused after %v, without waiting: %v\n",
			time.Since(start).Seconds(), time.Since(t0).Round(time.Microsecond), err)
	case err != nil:
		fmt.Fprintf(w, "  %5.2fs  a caller with a 50ms deadline failed: %v\n", time.Since(start).Seconds(), err)
	default:
		fmt.Fprintf(w, "  %5.2fs  a caller with a 50ms deadline got its quote (the queue was short)\n", time.Since(start).Seconds())
	}

	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	admitted, refused := srv.counts()
	st := client.Stats()
	fmt.Fprintf(stdout, "\n%d calls in %.1fs: the service admitted %d and refused %d; %d calls failed.\n",
		*workers**calls, time.Since(start).Seconds(), admitted, refused, failed)
	fmt.Fprintf(stdout, "The bucket: pacing at %.2f/s at the end (the quota is %.2f/s); %d callers waited, %.1fs in all;\n",
		float64(st.Limit), float64(*limit)/window.Seconds(), st.Waited, st.WaitTime.Seconds())
	fmt.Fprintf(stdout, "refused up front: %d; corrections from the service's fields: %d; cooldowns: %d.\n",
		st.RefusedTooLong+st.RefusedFull, st.Corrections, st.Cooldowns)
	return nil
}

// syncWriter serializes writes from several goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
