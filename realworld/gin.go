package realworld

import (
	"net/http"

	ginratelimit "github.com/JGLTechnologies/gin-rate-limit"
	"github.com/gin-gonic/gin"
)

// Gin is github.com/JGLTechnologies/gin-rate-limit's in-memory store in
// front of a github.com/gin-gonic/gin router, 30 per 3 s per client IP and
// route, as its README sets it up. Its "window" is not one: the key's 30
// tokens come back whole only once 3 s (in whole Unix seconds) have passed
// since its last admitted request, so a client that keeps sending below the
// limit never gets them back, and one that spends them at once and waits
// gets 30 per 2–3 s. It sends on every answer, a 429's too (Remaining 0
// there),
//
//	X-Rate-Limit-Limit: 30
//	X-Rate-Limit-Remaining: 29
//	X-Rate-Limit-Reset: 1764581103   (Unix s: the last admitted request's second + 3)
//
// and no Retry-After. A refused request is not counted. The store starts a
// goroutine that sweeps it once a minute for as long as the process lives.
func Gin() Server {
	return Server{
		Name:      "gin",
		Algorithm: "refill 3 s after the last admitted request",
		Headers:   "X-Rate-Limit-Limit/Remaining/Reset (Unix s, moves on with each admitted request)",
		Quota:     Quota{Limit: defLimit, Window: defWindow},
		// A client at the steady rate never pauses for 3 s, and gets half
		// its requests refused.
		RefusesSteadyRate: true,
		ShortWindows:      true,
		start: func() (*Instance, error) {
			return serve(func(ok http.Handler) (http.Handler, error) {
				gin.SetMode(gin.ReleaseMode)
				r := gin.New()
				r.Use(ginratelimit.RateLimiter(
					ginratelimit.InMemoryStore(&ginratelimit.InMemoryOptions{Rate: defWindow, Limit: uint(defLimit)}),
					&ginratelimit.Options{},
				))
				r.GET("/", gin.WrapH(ok))
				return r, nil
			})
		},
	}
}
