package main

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"net"
	"strings"
	"sync"
	"time"
)

// server is the quote service: a line protocol over TCP with a quota of
// limit requests per fixed window. A request is a line "QUOTE <symbol>"; the
// reply is one line,
//
//	OK <price> limit=<n> remaining=<n> reset=<unix ms> window=<ms>
//	BUSY limit=<n> remaining=0 reset=<unix ms> window=<ms> retry=<ms>
//
// It stands for any service whose client is not net/http: a gRPC API, a
// database driver, a message queue.
type server struct {
	ln     net.Listener
	limit  int
	window time.Duration
	wg     sync.WaitGroup

	mu       sync.Mutex
	start    time.Time
	win      int64 // index of the current window
	used     int   // requests admitted in it
	admitted int
	refused  int
}

func startServer(limit int, window time.Duration) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &server{ln: ln, limit: limit, window: window, start: time.Now()}
	s.wg.Go(s.serve)
	return s, nil
}

func (s *server) Addr() string { return s.ln.Addr().String() }

// Close stops the server and waits for its connections to end.
func (s *server) Close() {
	s.ln.Close()
	s.wg.Wait()
}

func (s *server) serve() {
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		s.wg.Go(func() { s.handle(conn) })
	}
}

func (s *server) handle(conn net.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return
	}
	symbol, ok := strings.CutPrefix(strings.TrimSpace(line), "QUOTE ")
	if !ok {
		fmt.Fprintf(conn, "ERR unknown request\n")
		return
	}
	fmt.Fprintf(conn, "%s\n", s.answer(symbol))
}

// answer counts one request against the quota and returns the reply.
func (s *server) answer(symbol string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if w := int64(now.Sub(s.start) / s.window); w != s.win {
		s.win, s.used = w, 0
	}
	reset := s.start.Add(time.Duration(s.win+1) * s.window)
	fields := func(remaining int) string {
		return fmt.Sprintf("limit=%d remaining=%d reset=%d window=%d",
			s.limit, remaining, reset.UnixMilli(), s.window.Milliseconds())
	}
	if s.used >= s.limit {
		s.refused++
		retry := reset.Sub(now).Milliseconds() + 1
		return fmt.Sprintf("BUSY %s retry=%d", fields(0), retry)
	}
	s.used++
	s.admitted++
	return fmt.Sprintf("OK %.2f %s", price(symbol), fields(s.limit-s.used))
}

func (s *server) counts() (admitted, refused int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.admitted, s.refused
}

// price makes up a stable price for a symbol.
func price(symbol string) float64 {
	h := fnv.New32a()
	h.Write([]byte(symbol))
	return 10 + float64(h.Sum32()%90000)/100
}
