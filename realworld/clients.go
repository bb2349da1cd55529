package realworld

import (
	"fmt"
	"net/http"

	"github.com/go-throttle/throttle"
	"golang.org/x/time/rate"
)

// A Client is a kind of client that the harness drives against a server.
type Client int

const (
	// ZeroConfig is one &throttle.Transport{} shared by every goroutine: it
	// learns the quota from the server.
	ZeroConfig Client = iota
	// ToldQuota is one throttle.Transport whose Config.Limit is the server's
	// steady rate, Limit ÷ Window.
	ToldQuota
	// XRate is x/time/rate told the quota: a RoundTripper that waits on one
	// rate.NewLimiter(Limit ÷ Window, 1) before http.DefaultTransport's kind
	// of transport. Burst 1 paces every request and never spends a server's
	// burst: safe on every algorithm, at the price of the burst a fresh GCRA
	// or token bucket would have admitted.
	XRate
	// FourProcesses is four independent zero-config throttle.Transports, as
	// four processes sharing one quota would be, each with its own
	// connections and a quarter of the goroutines.
	FourProcesses
	// NoLimit sends as fast as the goroutines can: the baseline.
	NoLimit
	// FourOnStore is four zero-config throttle.Transports sharing one
	// [throttle.MemoryStore], as four processes on one redisstore would:
	// they share the tokens and the holds. Not a column of the table.
	FourOnStore
)

// Clients returns every client kind, in the order of the table.
func Clients() []Client { return []Client{ZeroConfig, ToldQuota, XRate, FourProcesses, NoLimit} }

func (c Client) String() string {
	switch c {
	case ZeroConfig:
		return "zero config"
	case ToldQuota:
		return "told quota"
	case XRate:
		return "x/time/rate"
	case FourProcesses:
		return "four clients"
	case NoLimit:
		return "no limit"
	case FourOnStore:
		return "four on a store"
	}
	return fmt.Sprintf("Client(%d)", int(c))
}

// Slug is the name of the client kind in subtests and flags.
func (c Client) Slug() string {
	switch c {
	case ZeroConfig:
		return "zero"
	case ToldQuota:
		return "told"
	case XRate:
		return "xrate"
	case FourProcesses:
		return "four"
	case NoLimit:
		return "nolimit"
	case FourOnStore:
		return "store"
	}
	return fmt.Sprintf("client%d", int(c))
}

// A client is what a run drives: one or more limiting round trippers, each
// with its own connections, and a share of the goroutines.
type client struct {
	procs []proc
}

type proc struct {
	hc    *http.Client
	conns *http.Transport // closed at the end of the run
	tt    *throttle.Transport
}

// newConns is the connection pool of one "process": enough idle connections
// that every goroutine keeps its own, so that setting them up does not weigh
// on the figures.
func newConns() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 64
	t.MaxIdleConnsPerHost = 64
	return t
}

// build makes the client of kind c for a server of quota q; wrap is put
// between the limiting layer and the connections (the harness's cut-off).
func (c Client) build(q Quota, wrap func(http.RoundTripper) http.RoundTripper) (*client, error) {
	n := 1
	if c == FourProcesses || c == FourOnStore {
		n = 4
	}
	store := &throttle.MemoryStore{}
	cl := &client{}
	for range n {
		conns := newConns()
		base := wrap(conns)
		p := proc{conns: conns}
		var rt http.RoundTripper
		switch c {
		case ZeroConfig, FourProcesses:
			p.tt = &throttle.Transport{Base: base}
			rt = p.tt
		case FourOnStore:
			p.tt = &throttle.Transport{Base: base, Config: throttle.Config{Store: store}}
			rt = p.tt
		case ToldQuota:
			p.tt = &throttle.Transport{Base: base, Config: throttle.Config{Limit: q.Rate()}}
			rt = p.tt
		case XRate:
			rt = &rateTransport{lim: rate.NewLimiter(q.Rate(), 1), base: base}
		case NoLimit:
			rt = base
		default:
			return nil, fmt.Errorf("realworld: unknown client kind %d", int(c))
		}
		p.hc = &http.Client{Transport: rt}
		cl.procs = append(cl.procs, p)
	}
	return cl, nil
}

// rateTransport waits on an x/time/rate limiter before sending.
type rateTransport struct {
	lim  *rate.Limiter
	base http.RoundTripper
}

func (t *rateTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if err := t.lim.Wait(ctx); err != nil {
		if ctx.Err() == nil {
			// Wait refuses at once when the wait would outlast the
			// deadline: the same local refusal as throttle's.
			return nil, fmt.Errorf("%w: %v", throttle.ErrWaitTooLong, err)
		}
		return nil, err
	}
	return t.base.RoundTrip(req)
}
