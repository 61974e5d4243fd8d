import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { requestAddress } from "../lib/address";
import { assetUrl } from "../images/assetUrls";
import { logoSourceOf } from "../catalogue/provenance";
import { discoveredCatalogue } from "../discovery/onMiss";
import { type CompanyDetail, companyDetail, findCompanyByDomain } from "../catalogue/companies";
import { findCompanyOf, type Subject, subjectOfKey } from "../catalogue/resolveLogo";
import { takedownOf, takenDownMessage } from "../catalogue/takedowns";
import { overrideAsLogo, overridesOf, pinnedFor } from "../corrections/overrides";
import { fail, ok, type Result } from "../lib/errors";
import type { LogoOverride } from "../../schema";
import type { Context } from "hono";
import { shownName } from "../catalogue/names";
import { normaliseDomain } from "../lib/domain";
import { type CatalogueDb, catalogueReader } from "../lib/db";
import { jsonError } from "../lib/responses";
import { publicBase } from "../env";
import { type ApiEnv, secretKeyRoute } from "./auth";
import { commonErrors, Company, errorResponses, textParam } from "./schemas";

/**
 * GET /v1/companies/{companyId} and GET /v1/companies/lookup?domain=|ticker=|isin=|crypto=|email=|name=:
 * a company's metadata (domains, tickers, ISINs, crypto symbols, brand colour) and its logos
 * with URLs and sizes.
 */
const responses = {
  200: { description: "The company", content: { "application/json": { schema: Company } } },
  ...commonErrors,
  ...errorResponses(404, 451),
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

const LOOKUP_KEYS = ["domain", "ticker", "isin", "crypto", "email", "name"] as const;

const lookup = secretKeyRoute({
  method: "get",
  path: "/companies/lookup",
  summary: "Find a company by domain, ticker, ISIN, crypto symbol, email address or exact name",
  description:
    "Give exactly one of domain, ticker, isin, crypto, email or name. An email address names its domain's company; " +
    "a person's address at a mail provider (free or disposable) is a 404 that says so.",
  request: {
    query: z
      .object({
        domain: textParam("domain", 253).optional().openapi({ example: "stripe.com" }),
        ticker: textParam("ticker", 32).optional().openapi({ example: "NASDAQ:AAPL" }),
        isin: textParam("isin", 12).optional().openapi({ description: "ISO 6166, check digit included", example: "US0378331005" }),
        crypto: textParam("crypto", 12).optional().openapi({ description: "A coin's or token's symbol", example: "BTC" }),
        email: textParam("email", 254).optional().openapi({ example: "jane@stripe.com" }),
        name: textParam("name", 500).optional().openapi({ example: "Stripe" }),
      })
      .refine((q) => LOOKUP_KEYS.filter((key) => q[key] !== undefined).length === 1, `give exactly one of ${LOOKUP_KEYS.join(", ")}`),
  },
  responses,
});

/** The subject a lookup's query names, or the refusal it earns. */
function subjectOfQuery(query: Partial<Record<(typeof LOOKUP_KEYS)[number], string>>): Result<Subject> {
  const { domain, ticker, isin, crypto, email, name } = query;
  if (domain !== undefined) {
    const host = normaliseDomain(domain);
    return host.ok ? ok({ kind: "domain", value: host.domain }) : fail("invalid_argument", "Invalid domain format");
  }
  if (ticker !== undefined) return ok({ kind: "ticker", value: ticker });
  if (isin !== undefined) return subjectOfKey("isin", isin);
  if (crypto !== undefined) return subjectOfKey("crypto", crypto);
  if (email !== undefined) return subjectOfKey("email", email);
  return ok({ kind: "name", value: name ?? "" });
}

function companyBody(base: string, company: CompanyDetail, pinned: LogoOverride | undefined) {
  const { logos, ...rest } = company;
  const own = pinned && overrideAsLogo(pinned, undefined);
  return {
    ...rest,
    companyName: shownName(company),
    override: own
      ? { url: assetUrl(base, own.masterKey), width: own.width, height: own.height, updatedAt: own.updatedAt.toISOString() }
      : null,
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
      updatedAt: (logo.verifiedAt ?? logo.fetchedAt ?? logo.updatedAt).toISOString(),
    })),
  };
}

async function detailOf(db: CatalogueDb, companyId: number | undefined) {
  return companyId === undefined ? null : companyDetail(db, companyId);
}

export function registerGetCompany(api: OpenAPIHono<ApiEnv>) {
  api.openapi(lookup, async (c) => {
    const subject = subjectOfQuery(c.req.valid("query"));
    if (!subject.ok) return jsonError(c, subject.error.code === "not_found" ? "not_found" : "invalid_argument", subject.error.message);
    let db = catalogueReader(c.env.DB);
    let match = await findCompanyOf(db, subject.value);
    if (subject.value.kind === "domain") {
      const host = subject.value.value;
      // A domain taken down is never discovered either.
      const takenDown = await takedownOf(db, host, match?.domain);
      if (takenDown !== undefined) return jsonError(c, "taken_down", takenDownMessage(host, takenDown));
    }
    if (!match && subject.value.kind === "domain") {
      // Unknown to the catalogue: the domain's own site is asked, within the lookup's budget.
      const discovered = await discoveredCatalogue(c.env, subject.value.value, { ...c.get("key"), address: requestAddress(c.req.raw) });
      if (discovered) match = await findCompanyByDomain((db = discovered), subject.value.value);
    }
    const company = await detailOf(db, match?.companyId);
    if (!company) return jsonError(c, "not_found", "No company found");
    return answer(c, db, company);
  });

  api.openapi(byId, async (c) => {
    const { companyId } = c.req.valid("param");
    const db = catalogueReader(c.env.DB);
    const company = await companyDetail(db, companyId);
    if (!company) return jsonError(c, "not_found", `No company found with ID ${companyId}`);
    return answer(c, db, company);
  });
}

/** The company as the key's account sees it, unless its logos were taken down (451). */
async function answer(c: Context<ApiEnv>, db: CatalogueDb, company: CompanyDetail) {
  const takenDown = await takedownOf(db, company.domain);
  if (takenDown !== undefined) return jsonError(c, "taken_down", takenDownMessage(company.domain, takenDown));
  const key = c.get("key");
  const pinned = key.overrides ? pinnedFor(await overridesOf(db, key.accountId), ...company.domains) : undefined;
  return c.json(companyBody(publicBase(c.env, c.req.url), company, pinned), 200);
}
