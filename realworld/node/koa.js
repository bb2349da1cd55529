// koa-ratelimit in the setup its README gives, for the realworld tests
// (../node.go starts it; common.js has the flags and the rest).
//
//	node koa.js [--limit 30] [--window-ms 3000] [--watch-stdin]
//
// The middleware uses its memory driver (one Map for the process), keyed
// by client IP (its default id). Its record of a key opens at the first
// request after the last one expired: a fixed window from the first
// request. GET / answers 200 "ok" to what it admits.
"use strict";

const http = require("node:http");
const Koa = require("koa");
const ratelimit = require("koa-ratelimit");
const { config, counter, countPath, serve } = require("./common");

const cfg = config("koa.js");
const admitted = counter();

const app = new Koa();
app.use(
  ratelimit({
    driver: "memory",
    db: new Map(),
    duration: cfg.windowMs,
    max: cfg.limit,
    id: (ctx) => ctx.ip,
    whitelist: (ctx) => ctx.method === "GET" && ctx.path === countPath,
  }),
);
app.use(async (ctx) => {
  ctx.type = "text/plain";
  if (ctx.method === "GET" && ctx.path === countPath) {
    ctx.body = admitted.text();
    return;
  }
  admitted.admit();
  ctx.body = "ok\n";
});

serve("koa.js", http.createServer(app.callback()), cfg);
