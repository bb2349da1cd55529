package realworld

import "time"

// Express is express-rate-limit 8.7.5 (npm) in Express 5, run by Node.js,
// in the setup its README gives: 30 per 3 s (windowMs 3000) by client IP
// (its default key), the default MemoryStore, standardHeaders "draft-8",
// legacyHeaders off.
//
// The MemoryStore keeps a fixed window per key that opens at the first
// request after the previous window ended (resetTime = now + windowMs): it
// is aligned to no clock and not to the process's start. Every request is
// counted before it is checked, the refused ones too (harmless in a fixed
// window: the count dies with it); the 31st is refused. It sends, on a 200
// and on a 429 alike (r is 0 on every 429),
//
//	RateLimit: "30-in-3sec"; r=29; t=3
//	RateLimit-Policy: "30-in-3sec"; q=30; w=3; pk=:MTJjYTE3YjQ5YWYy:
//
// where t is the seconds until the window ends, rounded up (3 while 2.001 s
// are left: up to 1 s late), w the window in seconds rounded up, and pk the
// base64 of 12 hex digits of the key's SHA-256. A 429 also carries
// Retry-After with the same rounded-up seconds as t, and the body "Too many
// requests, please try again later." as text/html.
//
// It runs as node node/express.js, as every server of node/ runs (see
// node.go).
func Express() Server {
	return Server{
		Name:          "express",
		Algorithm:     "fixed window from first request",
		Headers:       `RateLimit "…"; r=; t= (s, rounded up) + RateLimit-Policy q=; w= (IETF draft-8), Retry-After on 429`,
		Quota:         Quota{Limit: defLimit, Window: defWindow},
		CountsRefused: true,
		start:         func() (*Instance, error) { return startExpress("draft-8", defLimit, defWindow) },
	}
}

// ExpressDraft6 is [Express] with standardHeaders "draft-6": the same fixed
// window, which sends on a 200 and on a 429 alike (Remaining 0 on every 429)
//
//	RateLimit-Policy: 30;w=3
//	RateLimit-Limit: 30
//	RateLimit-Remaining: 29
//	RateLimit-Reset: 3
//
// with Reset the seconds until the window ends, rounded up, as [Express]'s t,
// and on a 429 also Retry-After with the same value.
func ExpressDraft6() Server {
	return expressSending("express-draft6", "draft-6",
		"RateLimit-Limit/Remaining/Reset (s, rounded up) + RateLimit-Policy 30;w=3 (IETF draft-6), Retry-After on 429")
}

// ExpressLegacy is [Express] as the library sets itself up when told only
// its window and limit: standardHeaders off, legacyHeaders on. The same
// fixed window, which sends on a 200 and on a 429 alike (Remaining 0 on
// every 429)
//
//	X-RateLimit-Limit: 30
//	X-RateLimit-Remaining: 29
//	X-RateLimit-Reset: 1764581103
//
// with Reset the window's end in Unix seconds, rounded up
// (Math.ceil(resetTime / 1000)): up to a second after it, from a window
// that opens at any instant; and on a 429 also Retry-After, the seconds
// until that end, rounded up.
func ExpressLegacy() Server {
	return expressSending("express-legacy", "legacy",
		"X-RateLimit-Limit/Remaining/Reset (Unix s, rounded up; the library's default), Retry-After on 429")
}

// expressSending is [Express] named name, run with node/express.js's
// --headers set to which, its headers described as headers.
func expressSending(name, which, headers string) Server {
	s := Express()
	s.Name, s.Headers = name, headers
	s.start = func() (*Instance, error) { return startExpress(which, defLimit, defWindow) }
	return s
}

// startExpress runs node/express.js with the given header draft and quota.
func startExpress(headers string, limit int, window time.Duration) (*Instance, error) {
	return startNode("express.js", limit, window, "--headers", headers)
}
