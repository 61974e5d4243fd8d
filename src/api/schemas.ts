import { z } from "@hono/zod-openapi";
import { type ErrorStatus, errorCodeList } from "../lib/errors";

/** The REST API's records, named for the OpenAPI document; handlers answer exactly these. */
export const ErrorBody = z
  .object({
    error: z.string().openapi({ description: "What went wrong, for people", example: "Invalid domain format" }),
    code: z.enum(errorCodeList).openapi({ description: "What went wrong, for programs; decides the status" }),
    requestId: z.string().optional().openapi({
      description: "The request's id, as in its X-Request-Id header: what the service's logs know it by",
      example: "8f1e2d3c4b5a6978-LHR",
    }),
  })
  .openapi("Error");

const errorMeanings: Record<ErrorStatus, string> = {
  400: "Invalid parameters (the message names the parameter)",
  401: "No valid secret key",
  403: "The key may not do this",
  404: "Nothing found",
  409: "Conflicts with the current state",
  413: "Request body too large",
  429: "Rate limit exceeded (Retry-After, X-RateLimit-Reset)",
  451: "The domain's logos were taken down (the message gives the reason)",
  500: "Unexpected failure; the detail is logged, never returned",
  503: "A dependency did not answer; retry after Retry-After",
};

type ErrorResponse = { description: string; content: { "application/json": { schema: typeof ErrorBody } } };

/** Error answers for a route's `responses`, all with the one error body of every JSON surface. */
export function errorResponses<S extends ErrorStatus>(...statuses: S[]): Record<S, ErrorResponse> {
  return Object.fromEntries(
    statuses.map((status) => [status, { description: errorMeanings[status], content: { "application/json": { schema: ErrorBody } } }]),
  ) as Record<S, ErrorResponse>;
}

/**
 * A text query parameter given once, trimmed, neither empty nor longer than `max` characters;
 * every refusal names it (a parameter given twice arrives as an array).
 */
export const textParam = (name: string, max: number) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? `${name} is required` : `${name} must be given once`) })
    .trim()
    .min(1, `${name} must not be empty`)
    .max(max, `${name} must be at most ${max} characters`);

/** What every REST call may answer besides its own result. */
export const commonErrors = errorResponses(400, 401, 429, 500, 503);

/** A JSON body of a route, with the message a malformed one gets. */
export const jsonBody = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  required: true,
  content: { "application/json": { schema } },
});

/** Where a company's name comes from: what a stranger's site says is marked as such. */
export const NameSourceSchema = z.enum(["catalogue", "site", "domain"]).openapi({
  description:
    "Where the name comes from: `catalogue` (curated), `site` (what a discovered company's own site says, plain text agreeing with its domain, not verified), or `domain` (a discovered company named after its domain)",
});

export const CompanyHit = z
  .object({
    companyId: z.number().int().openapi({ example: 42 }),
    companyName: z.string().openapi({ example: "Stripe" }),
    nameSource: NameSourceSchema,
    domain: z.string().openapi({ example: "stripe.com" }),
    brandColor: z
      .string()
      .nullable()
      .openapi({ description: "The company's brand colour (#rrggbb), where the catalogue knows it", example: "#635bff" }),
    matchedBy: z.enum(["domain", "email", "ticker", "isin", "crypto", "name"]),
  })
  .openapi("CompanyHit");

export const Logo = z
  .object({
    logoId: z.number().int(),
    variant: z.enum(["full", "icon"]),
    format: z.string().openapi({ description: "Format of the file as imported (png, svg, …); delivered as PNG", example: "svg" }),
    width: z.number().int().openapi({ description: "Width of the PNG master in pixels" }),
    height: z.number().int(),
    url: z.url().openapi({ description: "Public, permanent PNG URL; add ?maxWidth=N to scale down" }),
    sourceSet: z.string(),
    licence: z.string(),
    source: z.enum(["catalogue", "discovered", "owner", "override"]).openapi({
      description:
        "Imported into the catalogue, discovered on the company's own site, set by the domain's verified owner, or your account's own override",
    }),
    sourceUrl: z.string().nullable().openapi({ description: "Where a discovered logo was fetched from" }),
    fetchedAt: z.string().nullable().openapi({ description: "When a discovered logo was fetched (ISO 8601)" }),
    updatedAt: z.string().openapi({ description: "When the image was last written or confirmed as it is (ISO 8601)" }),
  })
  .openapi("Logo");

export const Company = z
  .object({
    companyId: z.number().int(),
    companyName: z.string(),
    nameSource: NameSourceSchema,
    domain: z.string().openapi({ description: "Primary domain" }),
    domains: z.array(z.string()).openapi({ description: "Every host of the company, primary first" }),
    aliases: z.array(z.string()),
    tickers: z.array(z.object({ symbol: z.string(), exchange: z.string().nullable() })),
    isins: z.array(z.string()).openapi({ description: "ISINs of its listed shares (ISO 6166)", example: ["US0378331005"] }),
    crypto: z.array(z.string()).openapi({ description: "Symbols of its coins or tokens", example: ["BTC"] }),
    brandColor: z.string().nullable().openapi({ example: "#635bff" }),
    logos: z.array(Logo),
    override: z
      .object({
        url: z.url().openapi({ description: "Public PNG URL of the logo your account pinned" }),
        width: z.number().int(),
        height: z.number().int(),
        updatedAt: z.string(),
      })
      .nullable()
      .openapi({
        description: "The logo your account pinned for this company's domain (PUT /v1/overrides/{domain}), which your lookups answer",
      }),
  })
  .openapi("Company");

const Window = z.object({ used: z.number().int(), limit: z.number().int(), resetsAt: z.iso.datetime() });

export const Usage = z
  .object({
    plan: z.enum(["free", "launch", "growth", "enterprise"]),
    key: z.object({ id: z.string(), type: z.literal("secret") }),
    lookups: z.object({ minute: Window, month: Window }).openapi({
      description:
        "Lookups and REST calls: this key's in its minute, and the account's in its month (every key draws on the plan's monthly quota)",
    }),
    mcp: z
      .array(Window.extend({ window: z.enum(["day", "minute"]), toolset: z.enum(["seven", "three"]) }))
      .openapi({ description: "The account's MCP calls, one count, with each form's cap (/mcp and /mcp?toolset=three)" }),
    companiesToday: z.object({ current: z.number().int(), limit: z.number().int() }).nullable(),
    discoveriesToday: Window.openapi({
      description: "Discoveries of unknown domains the account's requests started today (UTC), against the plan's daily budget",
    }),
  })
  .openapi("Usage");
