// express-rate-limit in the setup its README gives, for the realworld tests
// (../express.go starts it; common.js has the flags and the rest).
//
//	node express.js [--limit 30] [--window-ms 3000] [--headers draft-8|draft-7|draft-6|legacy] [--watch-stdin]
//
// The limiter is keyed by client IP (the library's default keyGenerator;
// Express trusts no proxy, so that is the socket's address), with the
// default MemoryStore. A draft sends that draft's standard headers and not
// the legacy X-RateLimit-* ones; "legacy" is the library's default, the
// legacy headers alone. GET / (any path) answers 200 "ok" to what it
// admits.
"use strict";

const http = require("node:http");
const express = require("express");
const { rateLimit } = require("express-rate-limit");
const { config, counter, countPath, serve } = require("./common");

const cfg = config("express.js", ["draft-8", "draft-7", "draft-6", "legacy"]);
const legacy = cfg.headers === "legacy";
const admitted = counter();

const app = express();
// Only the limiter's headers besides Content-Type in the exchanges.
app.disable("x-powered-by");
app.disable("etag");
app.use(
  rateLimit({
    windowMs: cfg.windowMs,
    limit: cfg.limit,
    standardHeaders: legacy ? false : cfg.headers,
    legacyHeaders: legacy,
    skip: (req) => req.method === "GET" && req.path === countPath,
  }),
);
app.get(countPath, (_req, res) => {
  res.type("text/plain").send(admitted.text());
});
app.use((_req, res) => {
  admitted.admit();
  res.type("text/plain").send("ok\n");
});

serve("express.js", http.createServer(app), cfg);
