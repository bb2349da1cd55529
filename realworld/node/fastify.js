// @fastify/rate-limit in the setup its README gives, for the realworld tests
// (../node.go starts it; common.js has the flags and the rest).
//
//	node fastify.js [--limit 30] [--window-ms 3000] [--watch-stdin]
//
// The plugin is registered globally with max and timeWindow, keyed by
// client IP (its default keyGenerator), with its default local store: a
// fixed window per key that opens at the first request after the previous
// one ended. GET / answers 200 "ok" to what it admits.
"use strict";

const Fastify = require("fastify");
const { config, counter, countPath, serve } = require("./common");

const cfg = config("fastify.js");
const admitted = counter();

let server;
const app = Fastify({
  serverFactory: (handler) => {
    server = require("node:http").createServer(handler);
    return server;
  },
});

async function main() {
  await app.register(require("@fastify/rate-limit"), {
    max: cfg.limit,
    timeWindow: cfg.windowMs,
    allowList: (req) => req.url === countPath,
  });
  app.get(countPath, async (_req, reply) => {
    reply.type("text/plain").send(admitted.text());
  });
  app.get("/", async (_req, reply) => {
    admitted.admit();
    reply.type("text/plain").send("ok\n");
  });
  await app.ready();
  serve("fastify.js", server, cfg);
}

main().catch((err) => {
  process.stderr.write(`fastify.js: ${err.stack}\n`);
  process.exit(1);
});
