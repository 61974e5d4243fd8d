import { app } from "./app";
import { runSchedule } from "./corrections/scheduled";
import { log } from "./lib/log";
import { clock } from "./lib/context";
import { configurationProblems } from "./env";
import { consumeDiscoveries } from "./discovery/queue";
import { warmLookup } from "./lookup/warm";
import { followPurges } from "./purge/purge";

export { RateLimiter } from "./limits/rateLimiter";
export { CompanyQuota } from "./limits/companyQuota";
export { DiscoveryCoordinator } from "./discovery/coordinator";

// Said once per isolate, at its first request: a deployment missing a secret fails loudly in
// the logs at start, not one request at a time (names and consequences only, never values).
let configurationChecked = false;

export default {
  fetch: (request, env, ctx) => {
    if (!configurationChecked) {
      configurationChecked = true;
      for (const problem of configurationProblems(env)) log.error("configuration_problem", { problem });
    }
    // Purges made elsewhere reach this isolate after an answer, every ten seconds at most (src/purge/purge.ts).
    followPurges(env, (work) => ctx.waitUntil(work), clock.now());
    // A warm lookup is answered before the router (src/lookup/warm.ts); anything else is routed.
    return warmLookup(request, env, ctx) ?? app.fetch(request, env, ctx);
  },
  queue: (batch, env) => consumeDiscoveries(batch, env),
  // The Cron Trigger of wrangler.toml: owners' proofs checked again, discovered icons re-checked (src/corrections/scheduled.ts).
  scheduled: (controller, env, ctx) => ctx.waitUntil(runSchedule(env, controller.scheduledTime)),
} satisfies ExportedHandler<Env>;
