import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { accounts } from "../../schema";
import { createDb } from "../lib/db";
import { admitCompanies } from "../limits/companyLimits";
import { lookupUsage } from "../limits/lookupLimits";
import { mcpLimiterName, mcpWindows } from "../limits/mcpLimits";
import { type ApiEnv, secretKey } from "./auth";
import { ErrorBody, Usage } from "./schemas";

/** GET /v1/usage: the key's plan, its lookups this minute and month, the account's MCP calls and companies today. */
const route = createRoute({
  method: "get",
  path: "/v1/usage",
  summary: "Plan usage and quota",
  description: "Counts include this call. Lookups leased to edge isolates count as used when leased, so figures may run slightly ahead.",
  security: [{ secretKey: [] }],
  middleware: [secretKey] as const,
  responses: {
    200: { description: "Usage against the plan's limits", content: { "application/json": { schema: Usage } } },
    401: { description: "No valid secret key", content: { "application/json": { schema: ErrorBody } } },
    429: { description: "Rate limit exceeded", content: { "application/json": { schema: ErrorBody } } },
  },
});

const iso = (ms: number) => new Date(ms).toISOString();

export function registerUsage(api: OpenAPIHono<ApiEnv>) {
  api.openapi(route, async (c) => {
    const key = c.get("key");
    const account = await createDb(c.env.DB).query.accounts.findFirst({ where: eq(accounts.id, key.accountId), columns: { plan: true } });
    const plan = account?.plan ?? key.plan;
    const limiter = c.env.RATE_LIMITER.get(c.env.RATE_LIMITER.idFromName(mcpLimiterName(key.accountId)));
    const [lookups, mcp, companies] = await Promise.all([
      lookupUsage(c.env, { ...key, plan }),
      limiter.usage(mcpWindows(plan, "seven")),
      admitCompanies(c.env, key.accountId, plan, []),
    ]);
    const window = (name: string) => {
      const w = lookups.find((l) => l.name === name)!;
      return { used: w.used, limit: w.limit, resetsAt: iso(w.resetAt) };
    };
    return c.json(
      {
        plan,
        key: { id: key.id, type: "secret" as const },
        lookups: { minute: window("lookup-minute"), month: window("lookup-month") },
        mcp: mcp.map((w) => ({ window: w.name === "mcp_request-day" ? ("day" as const) : ("minute" as const), used: w.used, limit: w.limit, resetsAt: iso(w.resetAt) })),
        companiesToday: companies.ok ? companies.value : null,
      },
      200,
    );
  });
}
