package realworld

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// WriteExchange starts a fresh instance of s, sends it GET requests one
// after another until one is refused (at most 200), and writes the first
// answer and the first refusal, status line and headers (Date and
// Content-Length left out), in the form of an HTTP/1.1 response head.
func WriteExchange(w io.Writer, s Server) error {
	inst, err := s.Start()
	if err != nil {
		return err
	}
	defer inst.Close()
	conns := newConns()
	defer conns.CloseIdleConnections()
	hc := &http.Client{Transport: conns, Timeout: 5 * time.Second}
	for i := range 200 {
		resp, err := hc.Get(inst.URL)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if i == 0 || resp.StatusCode == http.StatusTooManyRequests {
			writeHead(w, i+1, resp)
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			return nil
		}
	}
	return fmt.Errorf("%s: no 429 in 200 requests", s.Name)
}

func writeHead(w io.Writer, n int, resp *http.Response) {
	fmt.Fprintf(w, "# request %d\n%s %s\n", n, resp.Proto, resp.Status)
	keys := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		if k != "Date" && k != "Content-Length" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s: %s\n", k, strings.Join(resp.Header[k], ", "))
	}
	fmt.Fprintln(w)
}
