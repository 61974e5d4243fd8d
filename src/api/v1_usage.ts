import type { OpenAPIHono } from "@hono/zod-openapi";
import { readVars } from "../env";
import { accountDiscoveriesPerDay } from "../limits/discoveryLimits";
import { eq } from "drizzle-orm";
import { accounts } from "../../schema";
import { lookupUsage } from "../limits/lookupLimits";
import { accountUsage } from "../limits/usage";
import { type ApiEnv, secretKeyRoute } from "./auth";
import { commonErrors, Usage } from "./schemas";

/** GET /v1/usage: the key's plan, its lookups this minute and its account's this month, the account's MCP calls, companies and discoveries today. */
const route = secretKeyRoute({
  method: "get",
  path: "/usage",
  summary: "Plan usage and quota",
  description:
    "Counts include this call. Lookups leased to edge isolates count as used when leased, so with traffic spread over many isolates the figures may run ahead of the lookups served.",
  responses: {
    200: { description: "Usage against the plan's limits", content: { "application/json": { schema: Usage } } },
    ...commonErrors,
  },
});

export function registerUsage(api: OpenAPIHono<ApiEnv>) {
  api.openapi(route, async (c) => {
    const key = c.get("key");
    const account = await c.var.ctx.db.query.accounts.findFirst({
      where: eq(accounts.id, key.accountId),
      columns: { plan: true, emailConfirmedAt: true },
    });
    const plan = account?.plan ?? key.plan;
    const perDay = accountDiscoveriesPerDay(
      { plan, emailConfirmed: account ? account.emailConfirmedAt !== null : key.emailConfirmed },
      readVars(c.env),
    );
    const [lookups, usage] = await Promise.all([lookupUsage(c.env, { ...key, plan }), accountUsage(c.env, key.accountId, plan, perDay)]);
    return c.json(
      {
        plan,
        key: { id: key.id, type: "secret" as const },
        lookups,
        mcp: usage.mcpRequests,
        companiesToday: usage.companiesToday,
        discoveriesToday: usage.discoveriesToday,
      },
      200,
    );
  });
}
