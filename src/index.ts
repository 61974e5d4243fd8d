import { app } from "./app";

export { RateLimiter } from "./limits/rateLimiter";
export { CompanyQuota } from "./limits/companyQuota";

export default {
  fetch: (request, env, ctx) => app.fetch(request, env, ctx),
} satisfies ExportedHandler<Env>;
