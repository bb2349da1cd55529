// Package realworld drives HTTP clients against rate-limited servers on
// loopback whose limiters come from projects nobody on throttle wrote
// (throttled's GCRA, tollbooth's token bucket, httprate's sliding-window
// counter, ulule/limiter's, go-limiter's and fiber's fixed windows, fiber's
// sliding window, echo's token bucket, gin-rate-limit, nginx's limit_req
// with and without nodelay, HAProxy's stick-table request rate, in Node.js
// express-rate-limit, @fastify/rate-limit, @nestjs/throttler,
// koa-ratelimit and rate-limiter-flexible, and in Python Flask-Limiter and
// Django REST framework's throttles), and reports how many 429s each
// client drew and how much of the quota it used.
//
// # Servers
//
// [Servers] lists them; each [Server] names its algorithm, the headers it
// sends and its true [Quota], and starts a fresh [Instance] per run. nginx is
// started from a temporary prefix on a free port, HAProxy from a temporary
// configuration on one, the Node.js limiters as node node/<library>.js on
// one; without the binary their Start fails with [ErrUnavailable].
//
// # Runs
//
// [Run] drives one [Client] kind against one server: 16 goroutines send GET
// requests as fast as the client lets them for 3 s, each with a 2 s
// deadline. The [Result] counts every outcome; [Result.Used] is the share of
// the quota used, 2xx ÷ (Limit × D/Window + Burst). [RunAll] runs a whole
// table; [WriteTable] prints it in Markdown.
//
// # Targets
//
// [Targets] are what throttle's server model should achieve. The tests
// assert them only with REALWORLD_STRICT=1.
//
// See README.md for each server's exact headers and how to reproduce the
// figures: go run ./realworld/cmd/table.
package realworld
