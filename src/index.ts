import { app } from "./app";
import { consumeDiscoveries } from "./discovery/queue";

export { RateLimiter } from "./limits/rateLimiter";
export { CompanyQuota } from "./limits/companyQuota";
export { DiscoveryCoordinator } from "./discovery/coordinator";

export default {
  fetch: (request, env, ctx) => app.fetch(request, env, ctx),
  queue: (batch, env) => consumeDiscoveries(batch, env),
} satisfies ExportedHandler<Env>;
