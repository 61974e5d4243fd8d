import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { shownName } from "../catalogue/names";
import { searchCompanies } from "../catalogue/search";
import { takenDownAmong } from "../catalogue/takedowns";
import { catalogueReader } from "../lib/db";
import { type ApiEnv, secretKeyRoute } from "./auth";
import { CompanyHit, commonErrors, textParam } from "./schemas";

/** GET /v1/companies/search: companies by name, domain, ticker, ISIN, email address or crypto symbol, ranked as the MCP search ranks them. */
const route = secretKeyRoute({
  method: "get",
  path: "/companies/search",
  summary: "Search companies",
  description:
    "By name (word prefixes, aliases, case and punctuation ignored), domain or ticker; an ISIN, an email address or crypto:SYMBOL finds its one company. " +
    "An exact domain, then an exact ticker, then names by closeness and prominence.",
  request: {
    query: z.object({
      q: textParam("q", 500).openapi({ example: "stripe" }),
      // Digits only, as companyId: `0x2`, `1e0` or `2.0` is not a limit, though a number parser would read one.
      limit: z
        .string({ message: "limit must be a whole number from 1 to 50" })
        .regex(/^(?:[1-9]|[1-4][0-9]|50)$/, "limit must be a whole number from 1 to 50")
        .default("10")
        .transform(Number)
        .openapi({ type: "integer", minimum: 1, maximum: 50, default: 10 }),
    }),
  },
  responses: {
    200: {
      description: "Matching companies, best first",
      content: { "application/json": { schema: z.object({ results: z.array(CompanyHit) }) } },
    },
    ...commonErrors,
  },
});

export function registerSearchCompanies(api: OpenAPIHono<ApiEnv>) {
  api.openapi(route, async (c) => {
    const { q, limit } = c.req.valid("query");
    const db = catalogueReader(c.env.DB);
    const found = await searchCompanies(db, q, limit);
    // A company whose logos were taken down is not found (docs/corrections.md#takedowns).
    const takenDown = await takenDownAmong(
      db,
      found.map((hit) => hit.domain),
    );
    const results = found.filter((hit) => !takenDown.has(hit.domain));
    return c.json({ results: results.map((hit) => ({ ...hit, companyName: shownName(hit) })) }, 200);
  });
}
