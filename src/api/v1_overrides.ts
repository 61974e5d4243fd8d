import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import { listOverrides, type OverrideSummary, removeOverride, setOverride } from "../corrections/overrides";
import { MAX_UPLOAD_BYTES, UPLOAD_TYPES } from "../corrections/upload";
import { publicBase } from "../env";
import { assetUrl } from "../images/assetUrls";
import { catalogueWriter } from "../lib/db";
import { jsonError } from "../lib/responses";
import { type ApiEnv, secretKey, secretKeyRoute } from "./auth";
import { commonErrors, errorResponses } from "./schemas";

/**
 * The account's own logos (docs/corrections.md, "Fixing a logo for yourself"):
 *   PUT    /v1/overrides/{domain}   the image as the body (image/png or image/svg+xml)
 *   GET    /v1/overrides            every override of the account
 *   DELETE /v1/overrides/{domain}   back to the catalogue's logo
 * The account's lookups, MCP tools and SDK answer an override within seconds; nobody else sees it.
 */
const Override = z
  .object({
    domain: z.string().openapi({ example: "acme.com" }),
    url: z.url().openapi({ description: "Public PNG URL of the pinned logo (the asset route; add ?maxWidth=N)" }),
    width: z.number().int(),
    height: z.number().int(),
    updatedAt: z.string(),
  })
  .openapi("Override");

const domainParam = z.object({
  domain: z
    .string()
    .min(1)
    .max(253)
    .openapi({ param: { name: "domain", in: "path" }, example: "acme.com" }),
});

const record = (base: string, summary: OverrideSummary) => ({
  domain: summary.domain,
  url: assetUrl(base, summary.masterKey),
  width: summary.width,
  height: summary.height,
  updatedAt: summary.updatedAt,
});

/** A body over MAX_UPLOAD_BYTES is refused before it is read, as a JSON error. */
const uploadLimit = bodyLimit({
  maxSize: MAX_UPLOAD_BYTES,
  onError: (c) => jsonError(c, "payload_too_large", `The image is larger than ${MAX_UPLOAD_BYTES / 1024} KB`),
});
/** An image body's type, checked before it is read: a form or JSON here is a mistake, not an image. */
const imageBody = createMiddleware(async (c, next) => {
  const type = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase() ?? "";
  if (!(type in UPLOAD_TYPES))
    return jsonError(c, "invalid_argument", "Send the image as the body, Content-Type image/png or image/svg+xml");
  await next();
});

const binary = { schema: z.string().openapi({ type: "string", format: "binary" }) };

const put = createRoute({
  method: "put",
  path: "/overrides/{domain}",
  summary: "Pin your own logo for a domain",
  description:
    "The image as the body: a PNG or an SVG of at most 1 MB, checked as imports are (SVG sanitised; at least 16 px, decoded within 4,096 px a side). " +
    "Your account's lookups (X-Logo-Source: override), MCP tools and SDK answer it within seconds; no other account sees it. At most 500 per account.",
  security: [{ secretKey: [] }],
  middleware: [secretKey, uploadLimit, imageBody] as const,
  request: {
    params: domainParam,
    body: { required: true, content: { "image/png": binary, "image/svg+xml": binary } },
  },
  responses: {
    200: { description: "Replaced", content: { "application/json": { schema: Override } } },
    201: { description: "Pinned", content: { "application/json": { schema: Override } } },
    ...commonErrors,
    ...errorResponses(409, 413),
  },
});

const list = secretKeyRoute({
  method: "get",
  path: "/overrides",
  summary: "List your logos",
  responses: {
    200: {
      description: "The account's overrides, by domain",
      content: { "application/json": { schema: z.object({ overrides: z.array(Override) }) } },
    },
    ...commonErrors,
  },
});

const remove = secretKeyRoute({
  method: "delete",
  path: "/overrides/{domain}",
  summary: "Remove your logo for a domain",
  request: { params: domainParam },
  responses: { 204: { description: "Removed: the catalogue's logo again" }, ...commonErrors, ...errorResponses(404) },
});

export function registerOverrides(api: OpenAPIHono<ApiEnv>) {
  api.openapi(put, async (c) => {
    const { domain } = c.req.valid("param");
    const bytes = new Uint8Array(await c.req.arrayBuffer());
    const key = c.get("key");
    const set = await setOverride(
      c.env,
      catalogueWriter(c.env.DB),
      key.accountId,
      domain,
      bytes,
      c.req.header("content-type"),
      c.var.ctx.now(),
    );
    if (!set.ok) return jsonError(c, set.error.code as "invalid_argument", set.error.message);
    return c.json(record(publicBase(c.env, c.req.url), set.value.override), set.value.outcome === "created" ? 201 : 200);
  });

  api.openapi(list, async (c) => {
    const overrides = await listOverrides(catalogueWriter(c.env.DB), c.get("key").accountId);
    const base = publicBase(c.env, c.req.url);
    return c.json({ overrides: overrides.map((o) => record(base, o)) }, 200);
  });

  api.openapi(remove, async (c) => {
    const { domain } = c.req.valid("param");
    const removed = await removeOverride(c.env, catalogueWriter(c.env.DB), c.get("key").accountId, domain, c.var.ctx.now());
    if (!removed.ok) return jsonError(c, removed.error.code as "not_found", removed.error.message);
    return c.body(null, 204);
  });
}
