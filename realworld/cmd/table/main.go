// Command table runs every client kind against every real-world server and
// prints a Markdown table of the share of 429s and of the quota used.
//
//	go run ./realworld/cmd/table [-d 3s] [-p 4] [-v] [-servers fiber,nginx] [-latency 100ms]
//	go run ./realworld/cmd/table -headers   # one example exchange per server
//
// Servers that cannot start here (nginx not installed) are left out, with a
// note on stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/go-throttle/throttle/realworld"
)

func main() {
	d := flag.Duration("d", 3*time.Second, "how long each client sends to each server")
	v := flag.Bool("v", false, "print every run's counts on stderr too")
	headers := flag.Bool("headers", false, "print each server's first answer and first 429 instead")
	parallel := flag.Int("p", 4, "how many servers run at once (0: all)")
	only := flag.String("servers", "", "comma-separated names of the servers to run; all when empty")
	limit := flag.Int("limit", 30, "the servers' quota: requests per -window (nginx and echo keep theirs)")
	window := flag.Duration("window", 3*time.Second, "the period of -limit, whole seconds")
	latency := flag.Duration("latency", 0, "a network's round trip added to each request, ±50% each way (realworld.Distant)")
	flag.Parse()
	if err := realworld.SetQuota(*limit, *window); err != nil {
		fmt.Fprintln(os.Stderr, "table:", err)
		os.Exit(2)
	}

	servers := realworld.Servers()
	if *only != "" {
		var err error
		if servers, err = realworld.ServersNamed(strings.Split(*only, ",")...); err != nil {
			fmt.Fprintln(os.Stderr, "table:", err)
			os.Exit(2)
		}
	}

	if *headers {
		for _, s := range servers {
			fmt.Printf("## %s (%s)\n\n", s.Name, s.Algorithm)
			if err := realworld.WriteExchange(os.Stdout, s); err != nil {
				fmt.Fprintln(os.Stderr, "table:", err)
			}
		}
		return
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	results, err := realworld.RunAll(ctx, servers, realworld.Clients(), realworld.Options{Duration: *d, Parallel: *parallel, Latency: *latency})
	if err != nil {
		fmt.Fprintln(os.Stderr, "table: left out:", err)
	}
	if *v {
		for _, r := range results {
			fmt.Fprintln(os.Stderr, r)
		}
	}
	fmt.Printf("Each cell: %% of answers that were 429 / %% of quota used (2xx ÷ (limit × D/window + burst)), D = %v, 16 goroutines", *d)
	if *latency > 0 {
		fmt.Printf(", %v round trips added", *latency)
	}
	fmt.Printf(".\n\n")
	if err := realworld.WriteTable(os.Stdout, results); err != nil {
		fmt.Fprintln(os.Stderr, "table:", err)
		os.Exit(1)
	}
	if ctx.Err() != nil {
		os.Exit(1)
	}
}
