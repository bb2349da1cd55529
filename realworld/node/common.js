// What every server here shares: its flags, the count of what it admitted
// (GET /__admitted, which no limiter counts), printing the port it got and
// stopping cleanly. Each server is started by ../node.go:
//
//	node <server>.js [--limit 30] [--window-ms 3000] [--headers H] [--watch-stdin]
//
// Each flag falls back to an environment variable (LIMIT, WINDOW_MS,
// HEADERS), then to the default. The server listens on 127.0.0.1, port 0,
// and prints the port it got as the first line of stdout. SIGTERM or SIGINT
// stops it: it stops listening, lets requests in flight finish and exits 0.
// With --watch-stdin it also stops when its stdin closes, so that it does
// not outlive a parent that died.
"use strict";

const { parseArgs } = require("node:util");

const countPath = "/__admitted";

function usage(script, headerChoices, msg) {
  const h = headerChoices.length ? ` [--headers ${headerChoices.join("|")}]` : "";
  process.stderr.write(`${script}: ${msg}\nusage: node ${script} [--limit N] [--window-ms MS]${h} [--watch-stdin]\n`);
  process.exit(2);
}

// config parses the flags; headerChoices are the values --headers takes
// (the first is the default), none if the server takes no such flag.
function config(script, headerChoices = []) {
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
    usage(script, headerChoices, err.message);
  }
  const positive = (name, s) => {
    if (!/^[1-9][0-9]*$/.test(s)) usage(script, headerChoices, `${name} ${JSON.stringify(s)}: want a positive whole number`);
    return Number(s);
  };
  let headers = values.headers ?? process.env.HEADERS ?? headerChoices[0];
  if (headerChoices.length === 0) {
    if (values.headers !== undefined) usage(script, headerChoices, "--headers: this server takes none");
    headers = undefined;
  } else if (!headerChoices.includes(headers)) {
    usage(script, headerChoices, `headers ${JSON.stringify(headers)}: want one of ${headerChoices.join(", ")}`);
  }
  return {
    limit: positive("limit", values.limit ?? process.env.LIMIT ?? "30"),
    windowMs: positive("window-ms", values["window-ms"] ?? process.env.WINDOW_MS ?? "3000"),
    headers,
    watchStdin: values["watch-stdin"] ?? false,
  };
}

// counter counts what the limiter let through.
function counter() {
  let admitted = 0;
  return {
    admit() {
      admitted++;
    },
    text() {
      return `${admitted}\n`;
    },
  };
}

// serve makes server (a node:http Server, not yet listening) listen, print
// its port, and stop on a signal or, with cfg.watchStdin, when stdin ends.
function serve(script, server, cfg) {
  server.listen(0, "127.0.0.1", () => {
    process.stdout.write(`${server.address().port}\n`);
  });
  server.on("error", (err) => {
    process.stderr.write(`${script}: listen: ${err.message}\n`);
    process.exit(1);
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    // close stops listening and ends idle keep-alive connections; a busy
    // one ends once its response is out.
    server.close((err) => process.exit(err ? 1 : 0));
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), 1000).unref();
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  if (cfg.watchStdin) {
    process.stdin.on("end", stop);
    process.stdin.on("error", stop);
    process.stdin.resume();
  }
}

module.exports = { config, counter, countPath, serve };
