package realworld

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"time"

	"github.com/didip/tollbooth/v7"
	tbl "github.com/didip/tollbooth/v7/limiter"
	"github.com/go-chi/httprate"
	"github.com/throttled/throttled/v2"
	"github.com/throttled/throttled/v2/store/memstore"
	"github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/middleware/stdlib"
	"github.com/ulule/limiter/v3/drivers/store/memory"
)

// ErrUnavailable is returned by [Server.Start] when what the server needs is
// not installed on this machine (nginx, Node.js).
var ErrUnavailable = errors.New("realworld: server unavailable")

// A Server is a rate-limited HTTP server on loopback, limited by a library
// nobody on this project wrote. Each [Server.Start] starts a fresh instance,
// so that every run meets the server in the same state.
type Server struct {
	Name      string // short, for tables and subtests
	Algorithm string // the limiting algorithm, as its authors describe it
	Headers   string // the rate-limit headers it sends; "" for none
	Quota     Quota  // what it truly enforces

	// CountsRefused reports whether a refused request counts against the
	// quota too, as if it had been admitted.
	CountsRefused bool
	// RefusesSteadyRate reports whether a client sending at exactly the
	// steady rate, Limit ÷ Window, is refused much of the time once the
	// server's first window has been used up: a counter of refused
	// requests that slides keeps such a client on the limit, and each
	// refusal keeps it there (only a client below the steady rate is
	// served); or the quota comes back only after a pause that such a
	// client never makes (gin).
	RefusesSteadyRate bool
	// ShortWindows reports whether a window may end up to a second early,
	// each time: its end is counted in whole seconds from a request's
	// second, so a client that spends each window at once may be served
	// Limit per Window − 1 s (gin). See [Server.MostAdmitted].
	ShortWindows bool

	start func() (*Instance, error)
}

// MostAdmitted is the most the server may admit in d to a client with no
// limit: its capacity, plus a window's Limit that opens as d ends (and
// lets in what is on the wire), with windows a second short where they
// may be.
func (s Server) MostAdmitted(d time.Duration) float64 {
	q := s.Quota
	if s.ShortWindows && q.Window > time.Second {
		q.Window -= time.Second
	}
	return q.Capacity(d) + float64(q.Limit)
}

// Start starts a fresh instance of the server. Close it when done.
func (s Server) Start() (*Instance, error) { return s.start() }

// An Instance is a running [Server].
type Instance struct {
	URL string // http://127.0.0.1:port/

	admitted func() int64
	close    func() error
}

// Admitted is how many requests the server admitted (answered 2xx), counted
// on the server side; -1 if the server does not tell. For nginx it is read
// from the access log and known only after [Instance.Close].
func (i *Instance) Admitted() int64 { return i.admitted() }

// Close stops the instance and waits for it to exit.
func (i *Instance) Close() error { return i.close() }

// Servers returns every server, in the order of the table.
func Servers() []Server {
	return []Server{
		Throttled(), Tollbooth(), Httprate(), Ulule(), GoLimiter(), FiberFixed(), FiberSliding(),
		Express(), ExpressDraft6(), ExpressLegacy(), Fastify(), Nest(), Koa(), Flexible(), Flask(), Nginx(), NginxDelay(), Echo(), UluleBare(), CountingBare(), HAProxy(), FlaskBare(), HAProxyRemaining(), Gin(), DRF(),
	}
}

// ServersNamed returns the servers of the given names, in the order given,
// or an error naming the first that is not one of [Servers].
func ServersNamed(names ...string) ([]Server, error) {
	all := Servers()
	out := make([]Server, 0, len(names))
	for _, name := range names {
		i := slices.IndexFunc(all, func(s Server) bool { return s.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("realworld: no server %q", name)
		}
		out = append(out, all[i])
	}
	return out, nil
}

// The quota of the servers that take one in any form: 30 per 3 s unless
// SetQuota says otherwise. nginx and echo keep their own (10 r/s, bursts of
// 5 and 20).
var (
	defLimit  = 30
	defWindow = 3 * time.Second
)

// SetQuota sets the quota of the servers that take one (every server but
// nginx's and echo's) to limit requests per window; tollbooth's bucket
// refills at the same rate and holds a second of it. Call it before
// [Servers]: a server started earlier keeps the quota it started with. The
// window is a whole number of seconds, for servers that take it in seconds.
func SetQuota(limit int, window time.Duration) error {
	if limit < 1 || window < time.Second || window%time.Second != 0 {
		return fmt.Errorf("realworld: quota %d per %v: want a limit of at least 1 per a whole number of seconds", limit, window)
	}
	defLimit, defWindow = limit, window
	return nil
}

// okHandler answers 200 "ok", counting what it answers: the limiters in
// front of it only call it for the requests they admit.
type okHandler struct{ n atomic.Int64 }

func (h *okHandler) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	h.n.Add(1)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// serve starts an httptest server of limit(ok) on a free loopback port.
func serve(limit func(ok http.Handler) (http.Handler, error)) (*Instance, error) {
	ok := new(okHandler)
	h, err := limit(ok)
	if err != nil {
		return nil, err
	}
	s := httptest.NewServer(h)
	return &Instance{
		URL:      s.URL + "/",
		admitted: ok.n.Load,
		close:    func() error { s.Close(); return nil },
	}, nil
}

// clientIP keys a request by its remote address without the port, as the
// libraries' own "by IP" keys do (some of which are deprecated for trusting
// forwarding headers).
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// Throttled is github.com/throttled/throttled/v2's GCRA with the in-memory
// store, 10/s with a capacity of 30 (MaxBurst 29), keyed by client IP. It
// sends on every answer
//
//	X-RateLimit-Limit: 30        (capacity, MaxBurst + 1)
//	X-RateLimit-Remaining: 29    (whole requests that could go now)
//	X-RateLimit-Reset: 1         (seconds until the bucket is full, rounded up)
//
// and on a 429 also Retry-After: seconds until the next request may go,
// rounded up (1 where 0.1 s would do). A refused request is not counted.
func Throttled() Server {
	return Server{
		Name:      "throttled",
		Algorithm: "GCRA",
		Headers:   "X-RateLimit-Limit/Remaining/Reset (s until full), Retry-After on 429",
		Quota:     Quota{Limit: defLimit, Window: defWindow, Burst: defLimit},
		start: func() (*Instance, error) {
			return serve(func(ok http.Handler) (http.Handler, error) {
				st, err := memstore.NewCtx(65536)
				if err != nil {
					return nil, err
				}
				q := throttled.RateQuota{MaxRate: throttled.PerDuration(defLimit, defWindow), MaxBurst: defLimit - 1}
				rl, err := throttled.NewGCRARateLimiterCtx(st, q)
				if err != nil {
					return nil, err
				}
				m := &throttled.HTTPRateLimiterCtx{RateLimiter: rl, VaryBy: &throttled.VaryBy{RemoteAddr: true}}
				return m.RateLimit(ok), nil
			})
		},
	}
}

// Tollbooth is github.com/didip/tollbooth/v7: a token bucket per client IP
// and path (x/time/rate underneath), at the quota's rate (10/s) with its
// default burst, a second of it (10). It
// cannot be told to send fewer headers; it sends on every answer
//
//	X-Rate-Limit-Limit: 10.00
//	X-Rate-Limit-Duration: 1
//	X-Rate-Limit-Request-Remote-Addr: 127.0.0.1:54321
//	RateLimit-Limit: 10
//	RateLimit-Reset: 1           (always 1, whatever the bucket holds)
//	RateLimit-Remaining: 9       (tokens left, truncated; 0 on a 429)
//
// and no Retry-After. A refused request is not counted.
func Tollbooth() Server {
	perSecond := float64(defLimit) / defWindow.Seconds()
	burst := max(1, int(perSecond)) // tollbooth's own
	return Server{
		Name:      "tollbooth",
		Algorithm: "token bucket",
		Headers:   "RateLimit-Limit/Remaining, RateLimit-Reset always 1, X-Rate-Limit-Limit/Duration",
		Quota:     Quota{Limit: defLimit, Window: defWindow, Burst: burst},
		start: func() (*Instance, error) {
			return serve(func(ok http.Handler) (http.Handler, error) {
				lmt := tollbooth.NewLimiter(perSecond, &tbl.ExpirableOptions{DefaultExpirationTTL: time.Hour})
				lmt.SetIPLookups([]string{"RemoteAddr"})
				return tollbooth.LimitHandler(lmt, ok), nil
			})
		},
	}
}

// Httprate is github.com/go-chi/httprate's sliding-window counter, 30 per
// 3 s per client IP, its windows aligned to the instant the limiter is made.
// It sends on every answer
//
//	X-RateLimit-Limit: 30
//	X-RateLimit-Remaining: 29
//	X-RateLimit-Reset: 1764581103   (Unix time of the current window's end, truncated)
//
// and on a 429 also Retry-After: 3, the whole window whatever is left of it.
// Reset is when the counter's window turns, not when the estimate (the
// previous window's count weighted by what is left of it, plus the current
// one) has room again. A refused request is not counted.
func Httprate() Server {
	return Server{
		Name:      "httprate",
		Algorithm: "sliding-window counter",
		Headers:   "X-RateLimit-Limit/Remaining/Reset (Unix s), Retry-After = window on 429",
		Quota:     Quota{Limit: defLimit, Window: defWindow},
		start: func() (*Instance, error) {
			return serve(func(ok http.Handler) (http.Handler, error) {
				key := func(r *http.Request) (string, error) { return clientIP(r), nil }
				return httprate.NewRateLimiter(defLimit, defWindow, httprate.WithKeyFuncs(key)).Handler(ok), nil
			})
		},
	}
}

// Ulule is github.com/ulule/limiter/v3 with its memory store and net/http
// middleware: a fixed window of 30 per 3 s per client IP that opens at the
// first request after the last one closed. It sends on every answer
//
//	X-RateLimit-Limit: 30
//	X-RateLimit-Remaining: 29       (0 on a 429)
//	X-RateLimit-Reset: 1764581103   (Unix time of the window's end, truncated)
//
// and no Retry-After. The store counts every request before checking, so
// refused ones count too, though a fixed window forgets them when it closes.
// The memory store is made with no clean-up interval: the default starts a
// goroutine that only a finalizer stops.
func Ulule() Server {
	return Server{
		Name:          "ulule",
		Algorithm:     "fixed window from first request",
		Headers:       "X-RateLimit-Limit/Remaining/Reset (Unix s)",
		Quota:         Quota{Limit: defLimit, Window: defWindow},
		CountsRefused: true,
		start: func() (*Instance, error) {
			return serve(func(ok http.Handler) (http.Handler, error) {
				return stdlib.NewMiddleware(ululeLimiter(), stdlib.WithKeyGetter(clientIP)).Handler(ok), nil
			})
		},
	}
}

func ululeLimiter() *limiter.Limiter {
	st := memory.NewStoreWithOptions(limiter.StoreOptions{Prefix: "realworld", CleanUpInterval: 0})
	return limiter.New(st, limiter.Rate{Period: defWindow, Limit: int64(defLimit)})
}

// UluleBare is [Ulule]'s limiter behind a handler of ours that sends no
// headers at all, only a bare 429: a fixed window from the first request
// that counts refused requests natively.
func UluleBare() Server {
	return Server{
		Name:          "ulule-bare",
		Algorithm:     "fixed window from first request",
		Quota:         Quota{Limit: defLimit, Window: defWindow},
		CountsRefused: true,
		start: func() (*Instance, error) {
			return serve(func(ok http.Handler) (http.Handler, error) {
				lim := ululeLimiter()
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					c, err := lim.Get(r.Context(), clientIP(r))
					if err != nil {
						http.Error(w, err.Error(), http.StatusInternalServerError)
						return
					}
					if c.Reached {
						http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
						return
					}
					ok.ServeHTTP(w, r)
				}), nil
			})
		},
	}
}

// CountingBare is a sliding-window counter of 30 per 3 s that counts every
// request before checking it, refused ones included, and sends no headers,
// only a bare 429. It is built on httprate's LimitCounter (httprate itself
// counts only admitted requests). A client that goes on sending at the
// steady rate once refused is refused for as long as it does: each refusal
// keeps the estimate over the limit (see [Server.RefusesSteadyRate]). From
// the second window on, x/time/rate told the quota sees half its answers
// 429.
func CountingBare() Server {
	return Server{
		Name:              "counting-bare",
		Algorithm:         "sliding-window counter, counts refused",
		Quota:             Quota{Limit: defLimit, Window: defWindow},
		CountsRefused:     true,
		RefusesSteadyRate: true,
		start: func() (*Instance, error) {
			return serve(func(ok http.Handler) (http.Handler, error) {
				return newCountingWindow(defLimit, defWindow, ok), nil
			})
		},
	}
}

// countingWindow is the handler of [CountingBare].
type countingWindow struct {
	limit  int
	window time.Duration
	start  time.Time // windows are [start + k·window, start + (k+1)·window); no monotonic reading
	c      httprate.LimitCounter
	next   http.Handler
}

func newCountingWindow(limit int, window time.Duration, next http.Handler) *countingWindow {
	return &countingWindow{
		limit: limit, window: window, start: time.Now().UTC(),
		c: httprate.NewLocalLimitCounter(window), next: next,
	}
}

func (cw *countingWindow) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	k := now.Sub(cw.start) / cw.window
	into := now.Sub(cw.start) - k*cw.window
	// From start's wall reading alone, so that every request of a window
	// names it by the same time.Time (the counter compares them with ==).
	cur := cw.start.Add(k * cw.window)
	key := clientIP(r)
	// Count first: the check below sees this request, refused or not.
	// Increment and Get are separate calls, so concurrent requests may both
	// see each other: that only refuses more.
	err := cw.c.Increment(key, cur)
	var n, prev int
	if err == nil {
		n, prev, err = cw.c.Get(key, cur, cur.Add(-cw.window))
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	est := float64(prev)*(1-float64(into)/float64(cw.window)) + float64(n)
	if est > float64(cw.limit) {
		http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
		return
	}
	cw.next.ServeHTTP(w, r)
}
