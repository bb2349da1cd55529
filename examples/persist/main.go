// Command persist is a CLI that is run several times in a row and resumes
// its bucket from a state file, instead of starting each run with a full
// bucket and bursting.
//
// The bucket stands for an API's quota: -limit requests per second with
// bursts of -burst. A first run spends the burst at once and then waits for
// tokens; without a saved state, a second run started right after would burst
// again, and together they would exceed the quota. throttle.PersistFile
// restores the bucket (tokens refilled only for the time that really passed,
// and any server cooldown still running) and saves it as it goes and on exit.
//
// Run it twice in a row and watch the second run wait:
//
//	go run ./examples/persist
//	go run ./examples/persist
//
// or let it run itself several times: go run ./examples/persist -runs 3.
// -state chooses the file (default: throttle-persist.json in os.TempDir),
// -reset deletes it first.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/go-throttle/throttle"
	"golang.org/x/time/rate"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "persist:", err)
		os.Exit(1)
	}
}

type options struct {
	state string
	limit float64
	burst int
	calls int
	runs  int
	reset bool
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	var o options
	fs := flag.NewFlagSet("persist", flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.StringVar(&o.state, "state", filepath.Join(os.TempDir(), "throttle-persist.json"), "state file")
	fs.Float64Var(&o.limit, "limit", 2, "the quota's steady rate, requests per second")
	fs.IntVar(&o.burst, "burst", 5, "the quota's burst")
	fs.IntVar(&o.calls, "calls", 6, "calls per run")
	fs.IntVar(&o.runs, "runs", 1, "how many runs to make in a row, each with a fresh bucket")
	fs.BoolVar(&o.reset, "reset", false, "delete the state file first")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	case !(o.limit > 0), o.burst < 1, o.calls < 1, o.runs < 1:
		return errors.New("-limit, -burst, -calls and -runs must be positive")
	}
	if o.reset {
		if err := os.Remove(o.state); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	for i := range o.runs {
		if o.runs > 1 {
			fmt.Fprintf(stdout, "Run %d of %d\n", i+1, o.runs)
		}
		if err := once(ctx, o, stdout); err != nil {
			return err
		}
	}
	return nil
}

// once is one run of the CLI: a new process would do exactly this.
func once(ctx context.Context, o options, w io.Writer) error {
	b := throttle.NewBucket(throttle.Config{Limit: rate.Limit(o.limit), Burst: o.burst})
	sf, err := throttle.PersistFile(b, o.state, 0)
	switch {
	case errors.Is(err, throttle.ErrBadState):
		fmt.Fprintf(w, "  state file %s unreadable (%v): starting with an empty bucket\n", o.state, err)
	case err != nil:
		return err
	}
	defer sf.Close()
	fmt.Fprintf(w, "  start: %.2f tokens of %d, refilling at %g/s (state file %s)\n", b.Tokens(), o.burst, o.limit, o.state)

	start := time.Now()
	for i := range o.calls {
		if err := b.Wait(ctx); err != nil {
			return err
		}
		// Here the CLI would call the API.
		fmt.Fprintf(w, "  call %d at %5.2fs\n", i+1, time.Since(start).Seconds())
	}
	if err := sf.Close(); err != nil {
		return fmt.Errorf("saving state: %w", err)
	}
	fmt.Fprintf(w, "  exit: saved %.2f tokens\n", b.Tokens())
	return nil
}
