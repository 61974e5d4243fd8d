import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { requestAddress } from "../lib/address";
import { assetUrl } from "../images/assetUrls";
import { logoSourceOf } from "../catalogue/provenance";
import { discoveredCatalogue } from "../discovery/onMiss";
import { type CompanyDetail, companyDetail, findCompanyByDomain, findCompanyByTicker } from "../catalogue/companies";
import { shownName } from "../catalogue/names";
import { findCompanyByName } from "../catalogue/search";
import { normaliseDomain } from "../lib/domain";
import { type CatalogueDb, catalogueReader } from "../lib/db";
import { jsonError } from "../lib/responses";
import { publicBase } from "../env";
import { type ApiEnv, secretKeyRoute } from "./auth";
import { commonErrors, Company, errorResponses, textParam } from "./schemas";

/**
 * GET /v1/companies/{companyId} and GET /v1/companies/lookup?domain=|ticker=|name=:
 * a company's metadata (domains, tickers, brand colour) and its logos with URLs and sizes.
 */
const responses = {
  200: { description: "The company", content: { "application/json": { schema: Company } } },
  ...commonErrors,
  ...errorResponses(404),
} as const;

const byId = secretKeyRoute({
  method: "get",
  path: "/companies/{companyId}",
  summary: "Get a company",
  request: {
    params: z.object({
      // Digits only: `1e0`, `0x1` or ` 1` is not an id, though a number parser would read 1.
      companyId: z
        .string()
        .regex(/^[1-9][0-9]{0,14}$/, "companyId must be a positive whole number")
        .transform(Number)
        .openapi({ param: { name: "companyId", in: "path" }, type: "integer", minimum: 1, example: 42 }),
    }),
  },
  responses,
});

const lookup = secretKeyRoute({
  method: "get",
  path: "/companies/lookup",
  summary: "Find a company by domain, ticker or exact name",
  description: "Give exactly one of domain, ticker or name.",
  request: {
    query: z
      .object({
        domain: textParam("domain", 253).optional().openapi({ example: "stripe.com" }),
        ticker: textParam("ticker", 32).optional().openapi({ example: "NASDAQ:AAPL" }),
        name: textParam("name", 500).optional().openapi({ example: "Stripe" }),
      })
      .refine(
        (q) => [q.domain, q.ticker, q.name].filter((v) => v !== undefined).length === 1,
        "give exactly one of domain, ticker or name",
      ),
  },
  responses,
});

function companyBody(base: string, company: CompanyDetail) {
  const { logos, ...rest } = company;
  return {
    ...rest,
    companyName: shownName(company),
    logos: logos.map((logo) => ({
      logoId: logo.id,
      variant: logo.variant,
      format: logo.format,
      width: logo.width,
      height: logo.height,
      url: assetUrl(base, logo.masterKey),
      sourceSet: logo.sourceSet,
      licence: logo.licence,
      source: logoSourceOf(logo.sourceSet),
      sourceUrl: logo.sourceUrl,
      fetchedAt: logo.fetchedAt?.toISOString() ?? null,
    })),
  };
}

async function detailOf(db: CatalogueDb, companyId: number | undefined) {
  return companyId === undefined ? null : companyDetail(db, companyId);
}

export function registerGetCompany(api: OpenAPIHono<ApiEnv>) {
  api.openapi(lookup, async (c) => {
    const { domain, ticker, name } = c.req.valid("query");
    let db = catalogueReader(c.env.DB);
    let match;
    if (domain !== undefined) {
      const host = normaliseDomain(domain);
      if (!host.ok) return jsonError(c, "invalid_argument", "Invalid domain format");
      match = await findCompanyByDomain(db, host.domain);
      // Unknown to the catalogue: the domain's own site is asked, within the lookup's budget.
      const discovered = match
        ? null
        : await discoveredCatalogue(c.env, host.domain, { ...c.get("key"), address: requestAddress(c.req.raw) });
      if (discovered) match = await findCompanyByDomain((db = discovered), host.domain);
    } else if (ticker !== undefined) {
      match = await findCompanyByTicker(db, ticker);
    } else {
      match = await findCompanyByName(db, name ?? "");
    }
    const company = await detailOf(db, match?.companyId);
    if (!company) return jsonError(c, "not_found", "No company found");
    return c.json(companyBody(publicBase(c.env, c.req.url), company), 200);
  });

  api.openapi(byId, async (c) => {
    const { companyId } = c.req.valid("param");
    const company = await companyDetail(catalogueReader(c.env.DB), companyId);
    if (!company) return jsonError(c, "not_found", `No company found with ID ${companyId}`);
    return c.json(companyBody(publicBase(c.env, c.req.url), company), 200);
  });
}
