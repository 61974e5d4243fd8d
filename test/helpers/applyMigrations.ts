import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";

// The same migrations/ files wrangler applies; applyD1Migrations skips ones already applied.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
