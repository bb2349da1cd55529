// @nestjs/throttler in a NestJS application, in the setup its README gives
// (ThrottlerModule.forRoot with one throttler, ThrottlerGuard as a global
// guard), for the realworld tests (../node.go starts it; common.js has the
// flags and the rest). Plain JavaScript: the decorators are applied as
// functions.
//
//	node nest.js [--limit 30] [--window-ms 3000] [--watch-stdin]
//
// The throttler is keyed by client IP (its default tracker) with its
// default in-memory storage. GET / answers 200 "ok" to what it admits.
"use strict";

require("reflect-metadata");
const { NestFactory, APP_GUARD } = require("@nestjs/core");
const { Module, Controller, Get, Header } = require("@nestjs/common");
const { ThrottlerModule, ThrottlerGuard, SkipThrottle } = require("@nestjs/throttler");
const { config, counter, countPath, serve } = require("./common");

const cfg = config("nest.js");
const admitted = counter();

class AppController {
  root() {
    admitted.admit();
    return "ok\n";
  }
  count() {
    return admitted.text();
  }
}
const method = (name) => Object.getOwnPropertyDescriptor(AppController.prototype, name);
Controller()(AppController);
Get("/")(AppController.prototype, "root", method("root"));
Header("Content-Type", "text/plain")(AppController.prototype, "root", method("root"));
Get(countPath)(AppController.prototype, "count", method("count"));
Header("Content-Type", "text/plain")(AppController.prototype, "count", method("count"));
SkipThrottle()(AppController.prototype, "count", method("count"));

class AppModule {}
Module({
  imports: [ThrottlerModule.forRoot([{ ttl: cfg.windowMs, limit: cfg.limit }])],
  controllers: [AppController],
  providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
})(AppModule);

async function main() {
  const app = await NestFactory.create(AppModule, { logger: false });
  await app.init();
  serve("nest.js", app.getHttpServer(), cfg);
}

main().catch((err) => {
  process.stderr.write(`nest.js: ${err.stack}\n`);
  process.exit(1);
});
