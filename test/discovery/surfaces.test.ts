import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { LogoLookup } from "../../src/sdk";
import { darkLogo40x20 } from "../fixtures/images";
import { addAccount, addCompany, addKey } from "../helpers/catalogue";
import { agent, structured } from "../mcp/helpers";
import { rest, secretKeyFor } from "../api/helpers";
import { claimSite, image, page, png } from "./helpers";

const iconSite = () => claimSite({ "/": page('<title>Surface Co</title><link rel="icon" href="/i.png">'), "/i.png": image(png(64, 64)) });

describe("discovery behind every surface that takes a domain", () => {
  it("REST lookup by domain discovers the company and names each logo's source", async () => {
    const site = await iconSite();
    const { key } = await secretKeyFor();
    const response = await rest(`/v1/companies/lookup?domain=${site.host}`, key);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { companyName: string; logos: Array<Record<string, unknown>> };
    expect(body.companyName).toBe("Surface Co");
    expect(body.logos[0]).toMatchObject({ source: "discovered", sourceSet: "discovered", sourceUrl: `https://${site.host}/i.png`, width: 64 });
    expect(body.logos[0]!.fetchedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it("MCP fetch_logos and fetch_logo discover unknown domains; records carry source", async () => {
    const [a, b] = [await iconSite(), await iconSite()];
    const { call } = await agent();
    const batch = structured<{ results: Array<Record<string, unknown>> }>(await call("fetch_logos", { domains: [a.host] }));
    expect(batch.results[0]).toMatchObject({ ok: true, resolvedDomain: a.host, source: "discovered", width: 64 });
    const one = structured<Record<string, unknown>>(await call("fetch_logo", { query: b.host }));
    expect(one).toMatchObject({ ok: true, domain: b.host, companyName: "Surface Co", source: "discovered" });
  });

  it("an imported logo takes precedence over the discovered one of the same company", async () => {
    const site = await iconSite();
    const { call } = await agent();
    const first = structured<{ results: Array<Record<string, unknown>> }>(await call("fetch_logos", { domains: [site.host] }));
    expect(first.results[0]).toMatchObject({ source: "discovered" });
    await addCompany({ name: "Surface Co", domains: [site.host] }, darkLogo40x20());
    const second = structured<{ results: Array<Record<string, unknown>> }>(await call("fetch_logos", { domains: [site.host] }));
    expect(second.results[0]).toMatchObject({ source: "catalogue", width: 40, companyId: first.results[0]!.companyId });
  });

  it("the SDK reports the source, and with fallback: monogram gets a monogram for a miss", async () => {
    const site = await iconSite();
    const account = await addAccount("launch");
    const secretKey = await addKey(account.id, { type: "secret" });
    const sdk = new LogoLookup({ secretKey, baseUrl: "https://logos.test", fetch: (input, init) => exports.default.fetch(new Request(input, init)) });
    expect(await sdk.get(site.host, { size: 32 })).toMatchObject({ source: "discovered", width: 32, contentType: "image/png" });
    const empty = await claimSite({ "/": page("<title>Quiet</title>") });
    const monogram = await sdk.get(empty.host, { fallback: "monogram", size: 50 });
    expect(monogram).toMatchObject({ source: "monogram", contentType: "image/svg+xml; charset=utf-8", width: 50, companyName: "Quiet" });
    expect(new TextDecoder().decode(monogram.bytes)).toContain(">Q</text>");
  });
});
