package realworld

import (
	"fmt"
	"io"
	"strings"
)

// WriteTable writes results as a Markdown table, one row per server (in the
// order they first appear) and, for each client kind, the share of answers
// that were 429 and the share of the quota used ([Result.Used]).
func WriteTable(w io.Writer, results []Result) error {
	var servers []Server
	var clients []Client
	cell := map[[2]string]Result{}
	seenS, seenC := map[string]bool{}, map[Client]bool{}
	for _, r := range results {
		if !seenS[r.Server.Name] {
			seenS[r.Server.Name] = true
			servers = append(servers, r.Server)
		}
		if !seenC[r.Client] {
			seenC[r.Client] = true
			clients = append(clients, r.Client)
		}
		cell[[2]string{r.Server.Name, r.Client.Slug()}] = r
	}
	var b strings.Builder
	b.WriteString("| server | algorithm | headers sent |")
	for _, c := range clients {
		fmt.Fprintf(&b, " %s: 429 / used |", c)
	}
	b.WriteString("\n|---|---|---|")
	for range clients {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, s := range servers {
		h := s.Headers
		if h == "" {
			h = "none (bare 429)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |", s.Name, s.Algorithm, h)
		for _, c := range clients {
			r, ok := cell[[2]string{s.Name, c.Slug()}]
			if !ok {
				b.WriteString(" – |")
				continue
			}
			fmt.Fprintf(&b, " %.1f%% / %.0f%% |", 100*r.Share429(), 100*r.Used())
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
