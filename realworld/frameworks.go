package realworld

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	fiberlimiter "github.com/gofiber/fiber/v2/middleware/limiter"
	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"
	"github.com/sethvargo/go-limiter/httplimit"
	"github.com/sethvargo/go-limiter/memorystore"
	"golang.org/x/time/rate"
)

// GoLimiter is github.com/sethvargo/go-limiter's memory store behind its
// httplimit middleware, 30 per 3 s per client IP. Its "bucket" is filled
// whole at every tick of the interval, the ticks counted from the key's
// first request: a fixed window aligned to that request at whatever
// sub-second phase it came. It sends on every answer
//
//	X-RateLimit-Limit: 30
//	X-RateLimit-Remaining: 29
//	X-RateLimit-Reset: Tue, 01 Dec 2026 16:40:03 UTC   (the window's end, RFC 1123 in UTC, truncated)
//
// and on a 429 also Retry-After, the same date. A refused request is not
// counted.
func GoLimiter() Server {
	return Server{
		Name:      "go-limiter",
		Algorithm: "fixed window from first request",
		Headers:   "X-RateLimit-Limit/Remaining/Reset (RFC 1123 UTC date), Retry-After date on 429",
		Quota:     Quota{Limit: defLimit, Window: defWindow},
		start: func() (*Instance, error) {
			store, err := memorystore.New(&memorystore.Config{Tokens: uint64(defLimit), Interval: defWindow})
			if err != nil {
				return nil, err
			}
			closeStore := func() error { return store.Close(context.Background()) }
			inst, err := serve(func(ok http.Handler) (http.Handler, error) {
				mw, err := httplimit.NewMiddleware(store, httplimit.IPKeyFunc())
				if err != nil {
					return nil, err
				}
				return mw.Handle(ok), nil
			})
			if err != nil {
				return nil, errors.Join(err, closeStore())
			}
			stop := inst.close
			inst.close = func() error { return errors.Join(stop(), closeStore()) }
			return inst, nil
		},
	}
}

// FiberFixed is github.com/gofiber/fiber/v2's limiter middleware with its
// default FixedWindow and memory storage, 30 per 3 s per client IP. Its
// clock is fiber's Unix timestamp in whole seconds, updated by a ticker
// once a second from when the first limiter was made, so a window opens at
// the key's first request rounded down to that ticker's second and may be
// up to a second short (a client that starts at once may be served three
// windows in 6 s). It counts every request before checking, refused
// ones included (a fixed window forgets them when it closes). It sends on a
// 2xx
//
//	X-RateLimit-Limit: 30
//	X-RateLimit-Remaining: 29
//	X-RateLimit-Reset: 3          (whole seconds until the window ends, by that clock)
//
// and on a 429 only Retry-After: seconds until the window ends, by the same
// clock (0 in its last second), with none of the X-RateLimit headers.
func FiberFixed() Server {
	return Server{
		Name:          "fiber",
		Algorithm:     "fixed window from first request, whole-second clock",
		Headers:       fiberHeaders,
		Quota:         Quota{Limit: defLimit, Window: defWindow},
		CountsRefused: true,
		start:         func() (*Instance, error) { return serveFiber(fiberlimiter.FixedWindow{}) },
	}
}

// FiberSliding is [FiberFixed] with fiber's SlidingWindow: the previous
// window's count weighted by the whole seconds left of the current one,
// plus the current count, refused requests included. Its windows are chained
// from the key's first request on fiber's whole-second clock. It sends what
// [FiberFixed] sends, Reset and Retry-After being the seconds until the
// current window ends. A client that goes on sending while refused keeps the
// estimate over the limit; one that waits out Retry-After is served.
//
// The weight is whole seconds left over the window's seconds, 3/3 to 1/3,
// never 0: the previous window counts whole at the start of the next. A
// client at a steady rate r sees an estimate of about 4r/s × 1 s per window
// second, so no client is served more than 7.5/s from the second window on:
// 75% of the nominal quota, against which [Result.Used] is measured.
func FiberSliding() Server {
	return Server{
		Name:          "fiber-sliding",
		Algorithm:     "sliding-window counter, counts refused, whole-second clock",
		Headers:       fiberHeaders,
		Quota:         Quota{Limit: defLimit, Window: defWindow},
		CountsRefused: true,
		// 10/s is a third over what it serves from the second window on,
		// and each refusal counts.
		RefusesSteadyRate: true,
		start:             func() (*Instance, error) { return serveFiber(fiberlimiter.SlidingWindow{}) },
	}
}

// fiberHeaders is what fiber's limiter sends, in either algorithm.
const fiberHeaders = "X-RateLimit-Limit/Remaining/Reset (s) on 2xx, only Retry-After (s) on 429"

// serveFiber serves a fiber app limited by algo on a free loopback port.
func serveFiber(algo fiberlimiter.LimiterHandler) (*Instance, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Use(fiberlimiter.New(fiberlimiter.Config{
		Max:               defLimit,
		Expiration:        defWindow,
		LimiterMiddleware: algo,
		KeyGenerator:      func(c *fiber.Ctx) string { return c.IP() },
	}))
	var n atomic.Int64
	app.Get("/", func(c *fiber.Ctx) error {
		n.Add(1)
		return c.SendString("ok\n")
	})
	done := make(chan error, 1)
	go func() { done <- app.Listener(ln) }()
	return &Instance{
		URL:      "http://" + ln.Addr().String() + "/",
		admitted: n.Load,
		close: func() error {
			err := app.ShutdownWithTimeout(5 * time.Second)
			select {
			case serr := <-done:
				return errors.Join(err, serr)
			case <-time.After(5 * time.Second):
				return errors.Join(err, errors.New("realworld: fiber's Listener did not return 5 s after Shutdown"))
			}
		},
	}, nil
}

// Echo is github.com/labstack/echo/v4's RateLimiter middleware with its
// memory store: an x/time/rate token bucket per client IP, 10/s with a
// burst of 20. It sends no rate-limit headers and no Retry-After, only a
// 429 with the JSON body {"message":"rate limit exceeded"}, and does not
// count refused requests.
func Echo() Server {
	const perSecond, burst = 10, 20
	return Server{
		Name:      "echo",
		Algorithm: "token bucket (x/time/rate, burst 20)",
		Quota:     Quota{Limit: perSecond, Window: time.Second, Burst: burst},
		start: func() (*Instance, error) {
			return serve(func(ok http.Handler) (http.Handler, error) {
				e := echo.New()
				e.HideBanner, e.HidePort = true, true
				store := echomw.NewRateLimiterMemoryStoreWithConfig(echomw.RateLimiterMemoryStoreConfig{
					Rate: rate.Limit(perSecond), Burst: burst, ExpiresIn: time.Hour,
				})
				e.Use(echomw.RateLimiterWithConfig(echomw.RateLimiterConfig{
					Store: store,
					IdentifierExtractor: func(c echo.Context) (string, error) {
						return clientIP(c.Request()), nil
					},
				}))
				e.GET("/", echo.WrapHandler(ok))
				return e, nil
			})
		},
	}
}
