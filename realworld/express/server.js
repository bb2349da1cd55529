// express-rate-limit in the setup its README gives, on a free loopback port,
// for the realworld tests (../express.go starts it).
//
//	node server.js [--limit 30] [--window-ms 3000] [--headers draft-8|draft-7|draft-6] [--watch-stdin]
//
// Each flag falls back to an environment variable (LIMIT, WINDOW_MS,
// HEADERS), then to the default shown. The limiter is keyed by client IP (the
// library's default keyGenerator; Express trusts no proxy, so that is the
// socket's address), with the default MemoryStore and the legacy X-RateLimit-*
// headers off.
//
// It listens on 127.0.0.1, port 0, and prints the port it got as the first
// line of stdout. GET / (any path) answers 200 "ok" to what the limiter
// admits and counts it; GET /__admitted, which the limiter skips, answers that
// count. SIGTERM or SIGINT stops it: it stops listening, lets requests in
// flight finish and exits 0. With --watch-stdin it also stops when its stdin
// closes, so that it does not outlive a parent that died.
"use strict";

const { parseArgs } = require("node:util");
const express = require("express");
const { rateLimit } = require("express-rate-limit");

const drafts = ["draft-6", "draft-7", "draft-8"];

function usage(msg) {
  process.stderr.write(
    `server.js: ${msg}\nusage: node server.js [--limit N] [--window-ms MS] [--headers ${drafts.join("|")}] [--watch-stdin]\n`,
  );
  process.exit(2);
}

function config() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        limit: { type: "string" },
        "window-ms": { type: "string" },
        headers: { type: "string" },
        "watch-stdin": { type: "boolean" },
      },
      strict: true,
    }));
  } catch (err) {
    usage(err.message);
  }
  const positive = (name, s) => {
    if (!/^[1-9][0-9]*$/.test(s)) usage(`${name} ${JSON.stringify(s)}: want a positive whole number`);
    return Number(s);
  };
  const headers = values.headers ?? process.env.HEADERS ?? "draft-8";
  if (!drafts.includes(headers)) usage(`headers ${JSON.stringify(headers)}: want one of ${drafts.join(", ")}`);
  return {
    limit: positive("limit", values.limit ?? process.env.LIMIT ?? "30"),
    windowMs: positive("window-ms", values["window-ms"] ?? process.env.WINDOW_MS ?? "3000"),
    headers,
    watchStdin: values["watch-stdin"] ?? false,
  };
}

const cfg = config();
const countPath = "/__admitted";
let admitted = 0;

const app = express();
// Only the limiter's headers besides Content-Type in the exchanges.
app.disable("x-powered-by");
app.disable("etag");
app.use(
  rateLimit({
    windowMs: cfg.windowMs,
    limit: cfg.limit,
    standardHeaders: cfg.headers,
    legacyHeaders: false,
    skip: (req) => req.method === "GET" && req.path === countPath,
  }),
);
app.get(countPath, (_req, res) => {
  res.type("text/plain").send(`${admitted}\n`);
});
app.use((_req, res) => {
  admitted++;
  res.type("text/plain").send("ok\n");
});

const server = app.listen(0, "127.0.0.1", (err) => {
  if (err) {
    process.stderr.write(`server.js: listen: ${err.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`${server.address().port}\n`);
});

let stopping = false;
function stop() {
  if (stopping) return;
  stopping = true;
  // close stops listening and ends idle keep-alive connections; a busy one
  // ends once its response is out.
  server.close((err) => process.exit(err ? 1 : 0));
  server.closeIdleConnections();
  setTimeout(() => server.closeAllConnections(), 1000).unref();
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
if (cfg.watchStdin) {
  process.stdin.on("end", stop);
  process.stdin.on("error", stop);
  process.stdin.resume();
}
