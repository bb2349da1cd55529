// rate-limiter-flexible's RateLimiterMemory behind a plain node:http
// server, with the headers its README has a server send, for the realworld
// tests (../node.go starts it; common.js has the flags and the rest).
//
//	node flexible.js [--limit 30] [--window-ms 3000] [--watch-stdin]
//
// Each request consumes a point of its client IP's key: points = limit per
// duration = the window (in seconds). A key's points expire together, a duration after the first of
// them: a fixed window from the first request; a refused request is
// counted too, which a fixed window does not feel. Every answer, admitted
// or refused, carries the README's
//
//	Retry-After: msBeforeNext / 1000          (seconds, to the millisecond)
//	X-RateLimit-Limit: points
//	X-RateLimit-Remaining: remainingPoints
//	X-RateLimit-Reset: Math.ceil((Date.now() + msBeforeNext) / 1000)
//
// GET / answers 200 "ok" to what it admits, 429 to the rest.
"use strict";

const http = require("node:http");
const { RateLimiterMemory } = require("rate-limiter-flexible");
const { config, counter, countPath, serve } = require("./common");

const cfg = config("flexible.js");
const admitted = counter();
const opts = { points: cfg.limit, duration: cfg.windowMs / 1000 };
const limiter = new RateLimiterMemory(opts);

function headers(res, r) {
  res.setHeader("Retry-After", r.msBeforeNext / 1000);
  res.setHeader("X-RateLimit-Limit", opts.points);
  res.setHeader("X-RateLimit-Remaining", r.remainingPoints);
  res.setHeader("X-RateLimit-Reset", Math.ceil((Date.now() + r.msBeforeNext) / 1000));
}

const server = http.createServer((req, res) => {
  res.setHeader("Content-Type", "text/plain");
  if (req.method === "GET" && req.url === countPath) {
    res.end(admitted.text());
    return;
  }
  limiter
    .consume(req.socket.remoteAddress)
    .then((r) => {
      headers(res, r);
      admitted.admit();
      res.end("ok\n");
    })
    .catch((r) => {
      if (r instanceof Error) {
        res.statusCode = 500;
        res.end(`${r.message}\n`);
        return;
      }
      headers(res, r);
      res.statusCode = 429;
      res.end("Too Many Requests\n");
    });
});

serve("flexible.js", server, cfg);
