import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { darkLogo40x20 } from "../fixtures/images";
import { Company, CompanyHit, Usage } from "../../src/api/schemas";
import { runDiscovery } from "../../src/discovery/run";
import { countMcpRequest } from "../../src/limits/mcpLimits";
import { claimSite, image, page, png } from "../discovery/helpers";
import { addCompany } from "../helpers/catalogue";
import { fetchWith } from "../lookup/helpers";
import { textOf } from "../web/helpers";
import { BASE, rest, STRIPE_ISIN, secretKeyFor, stripe } from "./helpers";
import { freezeClock } from "../helpers/clock";

describe("REST API with a secret key", () => {
  it("searches companies, best match first, answering the documented schema", async () => {
    const company = await stripe();
    const { key } = await secretKeyFor();
    for (const q of ["stripe", "STRP", "stripe.com"]) {
      const response = await rest(`/v1/companies/search?q=${encodeURIComponent(q)}`, key);
      expect(response.status).toBe(200);
      const body = (await response.json()) as { results: unknown[] };
      expect(body.results[0]).toMatchObject({ companyId: company.companyId, companyName: "Stripe", domain: "stripe.com" });
      for (const hit of body.results) {
        expect(CompanyHit.safeParse(hit).success).toBe(true);
        // The schema documents every field answered, no more and no fewer.
        expect(Object.keys(hit as object).sort()).toEqual(Object.keys(CompanyHit.shape).sort());
      }
    }
    expect(((await (await rest("/v1/companies/search?q=zzzz%20qqqq", key)).json()) as { results: unknown[] }).results).toEqual([]);
  });

  it("searches by ISIN, email address and crypto:SYMBOL, each finding its one company", async () => {
    const company = await stripe();
    const { key } = await secretKeyFor();
    const search = async (q: string) =>
      (
        (await (await rest(`/v1/companies/search?q=${encodeURIComponent(q)}`, key)).json()) as {
          results: { companyId: number; matchedBy: string }[];
        }
      ).results;
    for (const [q, matchedBy] of [
      [STRIPE_ISIN, "isin"],
      ["jane@stripe.com", "email"],
      ["crypto:strp", "crypto"],
    ]) {
      const results = await search(q!);
      expect(
        results.map((hit) => [hit.companyId, hit.matchedBy]),
        q,
      ).toEqual([[company.companyId, matchedBy]]);
    }
    // An address at a mail provider is a person's: no company, not the provider's.
    expect(await search("jane@gmail.com")).toEqual([]);
    // An ISIN whose check digit fails is no ISIN; searched as a word, it finds nothing.
    expect(await search("US8631111008")).toEqual([]);
  });

  it("answers at most `limit` companies, 10 unless asked, 50 at most", async () => {
    const word = `Limitco${crypto.randomUUID().slice(0, 6)}`;
    for (let i = 1; i <= 12; i++)
      await addCompany(
        { name: `${word} ${i}`, domains: [`${word.toLowerCase()}-${i}.com`] },
        { ...darkLogo40x20(), contentHash: `${i}`.padStart(64, "c") },
      );
    const { key } = await secretKeyFor();
    const count = async (query: string) =>
      ((await (await rest(`/v1/companies/search?q=${word}${query}`, key)).json()) as { results: unknown[] }).results.length;
    expect([await count("&limit=2"), await count(""), await count("&limit=50")]).toEqual([2, 10, 12]);
  });

  it("gives a company's metadata and logos, by id or by domain, ticker or name", async () => {
    const company = await stripe();
    const { key } = await secretKeyFor();
    const byId = await rest(`/v1/companies/${company.companyId}`, key);
    expect(byId.status).toBe(200);
    const body = (await byId.json()) as Record<string, unknown>;
    expect(Company.parse(body)).toEqual({
      companyId: company.companyId,
      companyName: "Stripe",
      nameSource: "catalogue",
      domain: "stripe.com",
      domains: ["stripe.com", "stripe.dev"],
      aliases: ["Stripe Inc"],
      tickers: [{ symbol: "STRP", exchange: "NYSE" }],
      isins: [STRIPE_ISIN],
      crypto: ["STRP"],
      brandColor: "#635bff",
      logos: [
        expect.objectContaining({ logoId: company.full, variant: "full", format: "png", width: 40, height: 20 }),
        expect.objectContaining({ logoId: company.icon, variant: "icon", format: "png", width: 40, height: 20, licence: "CC0-1.0" }),
      ],
      // No logo of the account's own for stripe.com (docs/corrections.md).
      override: null,
    });
    const logo = (body.logos as { url: string }[])[1]!;
    const image = await exports.default.fetch(logo.url);
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(darkLogo40x20().files.master);

    for (const query of [
      "domain=www.stripe.dev",
      "ticker=NYSE:STRP",
      "name=stripe",
      `isin=${STRIPE_ISIN.toLowerCase()}`,
      "crypto=strp",
      "email=Jane.Doe%2Binvoices%40stripe.dev",
    ]) {
      const found = await rest(`/v1/companies/lookup?${query}`, key);
      expect(found.status, query).toBe(200);
      expect(((await found.json()) as { companyId: number }).companyId).toBe(company.companyId);
    }
  });

  it("reports a Free account's MCP calls against each form's daily cap: 20 for the three-tool form, not 50", async () => {
    const { account, key } = await secretKeyFor("free");
    for (let i = 0; i < 3; i++) expect((await countMcpRequest(env, account.id, "free", "three")).allowed).toBe(true);
    const usage = Usage.parse(await (await rest("/v1/usage", key)).json());
    expect(usage.mcp.map(({ toolset, window, used, limit }) => ({ toolset, window, used, limit }))).toEqual([
      { toolset: "seven", window: "day", used: 3, limit: 50 },
      { toolset: "three", window: "day", used: 3, limit: 20 },
    ]);
  });

  it("reports the plan's usage, counting REST calls against the key's lookups", async () => {
    const { key } = await secretKeyFor("growth");
    await rest("/v1/companies/search?q=a", key);
    const response = await rest("/v1/usage", key);
    expect(response.status).toBe(200);
    const usage = Usage.parse(await response.json());
    expect(usage.plan).toBe("growth");
    expect(usage.lookups.minute.limit).toBe(20_000);
    expect(usage.lookups.month.limit).toBe(25_000_000);
    expect(usage.lookups.month.used).toBeGreaterThanOrEqual(2);
    expect(usage.mcp).toEqual([
      expect.objectContaining({ window: "minute", toolset: "seven", used: 0, limit: 10_000 }),
      expect.objectContaining({ window: "minute", toolset: "three", used: 0, limit: 10_000 }),
    ]);
    expect(usage.companiesToday).toEqual({ current: 0, limit: 10_000 });
    expect(usage.discoveriesToday).toMatchObject({ used: 0, limit: 50_000 });
    expect(response.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/);
  });

  it("reports a key one isolate serves exactly, as its X-RateLimit-Remaining does, not what it leased ahead", async () => {
    // One minute's leases.
    freezeClock();
    const { key } = await secretKeyFor("launch");
    for (let call = 1; call <= 12; call++) {
      const response = await rest("/v1/usage", key);
      const usage = Usage.parse(await response.json());
      const remaining = Number(response.headers.get("x-ratelimit-remaining"));
      expect(usage.lookups.minute.used, `call ${call}`).toBe(usage.lookups.minute.limit - remaining);
      expect(usage.lookups.month.used, `call ${call}`).toBe(call);
    }
  });

  it("reports the discoveries the account's requests started today", async () => {
    const { key } = await secretKeyFor("free");
    const site = await claimSite({ "/": page('<link rel="icon" href="/i.png">'), "/i.png": image(png(64, 64)) });
    expect((await rest(`/v1/companies/lookup?domain=${site.host}`, key)).status).toBe(200);
    // Known now: asking again starts nothing.
    expect((await rest(`/v1/companies/lookup?domain=${site.host}`, key)).status).toBe(200);
    const usage = Usage.parse(await (await rest("/v1/usage", key)).json());
    expect(usage.discoveriesToday).toMatchObject({ used: 1, limit: 500 });
  });

  it("publishes an OpenAPI 3.1 document generated from the same schemas, and a readable page of it", async () => {
    const doc = (await (await exports.default.fetch("https://logos.test/openapi.json")).json()) as {
      openapi: string;
      paths: Record<string, unknown>;
      components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
    };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths).sort()).toEqual([
      "/v1/changes",
      "/v1/companies/lookup",
      "/v1/companies/search",
      "/v1/companies/{companyId}",
      "/v1/overrides",
      "/v1/overrides/{domain}",
      "/v1/reports",
      "/v1/usage",
    ]);
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(["Company", "CompanyHit", "Logo", "Usage", "Error"]));
    expect(doc.components.securitySchemes.secretKey).toMatchObject({ type: "http", scheme: "bearer" });

    const page = await exports.default.fetch("https://logos.test/docs");
    expect(page.headers.get("content-type")).toContain("text/html");
    const html = await page.text();
    expect(html).toContain("/v1/companies/search");
    expect(html).toContain("Authorization: Bearer sk_");
    expect(await textOf(new Response(html))).toContain('errors {"error": "<message>", "code": "<code>"}');
    expect(html).not.toContain("<script");
  });
});

describe('numeric vars left empty (NAME = "") take their defaults, as if unset', () => {
  const lookupWith = (vars: Partial<Env>, domain: string, key: string) =>
    fetchWith(vars, `${BASE}/v1/companies/lookup?domain=${domain}`, { headers: { Authorization: `Bearer ${key}` } });

  it("DISCOVERY_BUDGET_MS: a domain the catalogue lacks is discovered within the default budget, not answered at once as unknown", async () => {
    const site = await claimSite({
      "/": page('<title>Budget Widgets</title><link rel="icon" href="/i.png">'),
      "/i.png": image(png(64, 64)),
    });
    const { key } = await secretKeyFor();
    const response = await lookupWith({ DISCOVERY_BUDGET_MS: "" }, site.host, key);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ domain: site.host });
  });

  it("DISCOVERY_MISS_TTL_S: a site with nothing usable is remembered for the default day, not fetched again at the next lookup", async () => {
    const site = await claimSite({ "/": page("<title>Nothing to see</title>") });
    // Discoveries run in their Durable Object, under the Worker's own vars: this one is run directly.
    expect(await runDiscovery({ ...env, DISCOVERY_MISS_TTL_S: "" }, site.host, { refresh: false })).toMatchObject({ status: "nothing" });
    const asked = (await site.requests()).length;
    expect(asked).toBeGreaterThan(0);
    const { key } = await secretKeyFor();
    expect((await rest(`/v1/companies/lookup?domain=${site.host}`, key)).status).toBe(404);
    expect((await site.requests()).length).toBe(asked);
  });
});
