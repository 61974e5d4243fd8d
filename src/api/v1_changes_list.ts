import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { listChanges, MAX_CHANGES_PAGE } from "../catalogue/changes";
import { catalogueReader } from "../lib/db";
import { normaliseDomain, registrableDomain } from "../lib/domain";
import { jsonError } from "../lib/responses";
import type { ApiEnv } from "./auth";
import { errorResponses } from "./schemas";

/**
 * GET /v1/changes: the public change log, newest first (docs/corrections.md, "The change log"):
 * every change a verified owner made, verifications and lapses, takedowns, operators'
 * replacements and icons a refresh replaced. Public: no key, nothing counted.
 */
const Change = z
  .object({
    id: z.number().int(),
    domain: z.string(),
    change: z.string().openapi({ description: "icon, full, name, brand_color, verified, lapsed, takedown, takedown_lifted" }),
    detail: z.string().nullable().openapi({ description: "The new name or colour, the logo's size, a takedown's reason" }),
    method: z.string().openapi({ description: "How it was authorised: dns or well_known (the owner's verification), operator, refresh" }),
    at: z.string(),
  })
  .openapi("Change");

const route = createRoute({
  method: "get",
  path: "/changes",
  summary: "The change log",
  description: "Newest first. Give `before` (the last id of a page) for the next page.",
  request: {
    query: z.object({
      before: z
        .string()
        .regex(/^[1-9][0-9]{0,14}$/, "before must be a positive whole number")
        .transform(Number)
        .optional()
        .openapi({ type: "integer" }),
      domain: z.string().min(1).max(253).optional().openapi({ example: "acme.com" }),
      limit: z
        .string()
        .regex(/^(?:[1-9]|[1-9][0-9]|100)$/, `limit must be a whole number from 1 to ${MAX_CHANGES_PAGE}`)
        .default("50")
        .transform(Number)
        .openapi({ type: "integer", minimum: 1, maximum: MAX_CHANGES_PAGE, default: 50 }),
    }),
  },
  responses: {
    200: {
      description: "Changes, newest first; `next` is the `before` of the next page, null at the end",
      content: { "application/json": { schema: z.object({ changes: z.array(Change), next: z.number().int().nullable() }) } },
    },
    ...errorResponses(400, 500, 503),
  },
});

export function registerChanges(api: OpenAPIHono<ApiEnv>) {
  api.openapi(route, async (c) => {
    const { before, domain, limit } = c.req.valid("query");
    let named: string | undefined;
    if (domain !== undefined) {
      const host = normaliseDomain(domain);
      if (!host.ok) return jsonError(c, "invalid_argument", "Invalid domain format");
      named = registrableDomain(host.domain) ?? host.domain;
    }
    const changes = await listChanges(catalogueReader(c.env.DB), { before, domain: named, limit });
    c.header("Cache-Control", "public, max-age=60");
    return c.json({ changes, next: changes.length === limit ? changes.at(-1)!.id : null }, 200);
  });
}
