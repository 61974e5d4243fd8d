import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { brandClaims } from "../../schema";
import { CLAIM_RECHECK_MS } from "../../src/corrections/ownership";
import worker from "../../src/index";
import { rest, secretKeyFor } from "../api/helpers";
import { claimSite } from "../discovery/helpers";
import { darkLogo40x20 } from "../fixtures/images";
import { db } from "../helpers/catalogue";
import { assetKeyOf, BASE, freshKey } from "../lookup/helpers";
import { company } from "../mcp/helpers";
import { type Browser, signedUp, textOf } from "../web/helpers";

/**
 * Owner-verified brands (issue 41; docs/corrections.md, "Claiming your brand"): an account
 * proves control of a domain by a TXT record at `_logo-lookup.<domain>` (read over
 * DNS-over-HTTPS from the fake resolver on 127.0.0.1, test/fakes/dnsOverHttps.ts) or a file at
 * `/.well-known/logo-lookup.txt` on the domain's site (a fake website); then its logo, name and
 * colour are everyone's, entered in the public change log. The scheduled run checks the proof
 * again and the brand lapses when it is gone. A claim not verified changes nothing.
 */
const dns = (name: string, init: RequestInit) => fetch(`${env.DNS_FAKE_CONTROL}/records/${name}`, init);
const publishTxt = (domain: string, txt: string[]) => dns(`_logo-lookup.${domain}`, { method: "PUT", body: JSON.stringify({ txt }) });
const removeTxt = (domain: string) => dns(`_logo-lookup.${domain}`, { method: "DELETE" });

async function tokenOf(domain: string): Promise<string> {
  const claim = await db.select().from(brandClaims).where(eq(brandClaims.domain, domain)).get();
  return claim!.token;
}

/** The first claim to the domain. */
async function statusOf(domain: string) {
  return (await db
    .select({ status: brandClaims.status, method: brandClaims.method })
    .from(brandClaims)
    .where(eq(brandClaims.domain, domain))
    .orderBy(brandClaims.id)
    .get())!;
}

const lookup = (token: string, domain: string) => exports.default.fetch(`${BASE}/${domain}?token=${token}`, { redirect: "manual" });

async function companyName(key: string, domain: string): Promise<string> {
  return ((await (await rest(`/v1/companies/lookup?domain=${domain}`, key)).json()) as { companyName: string }).companyName;
}

function uploadLogo(browser: Browser, domain: string, bytes: Uint8Array) {
  const form = new FormData();
  form.set("variant", "icon");
  form.set("file", new File([bytes], "logo.png", { type: "image/png" }));
  return browser.fetch(`/portal/corrections/brands/${domain}/logo`, { method: "POST", body: form });
}

async function runSchedule(at: number) {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: at, cron: "*/10 * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

describe("an owner's claim", () => {
  it("verified by a DNS TXT record sets the logo and name for everyone, in the change log, until the record goes", async () => {
    const site = await claimSite({});
    const domain = site.host;
    await company("Old Name", [domain]);
    const { key } = await secretKeyFor("launch");
    const someone = await freshKey();
    const catalogueKey = assetKeyOf((await lookup(someone, domain)).headers.get("location")!);

    const { browser } = await signedUp();
    expect((await browser.postForm("/portal/corrections/brands", { domain })).status).toBe(303);
    const token = await tokenOf(domain);
    expect(await textOf(await browser.fetch("/portal/corrections"))).toContain(token);

    // Not verified yet: the owner's edits are refused and nothing changes.
    expect((await browser.postForm(`/portal/corrections/brands/${domain}`, { name: "Hijacked" })).status).toBe(403);
    expect((await uploadLogo(browser, domain, darkLogo40x20().files.master)).status).toBe(403);
    // A record that holds something else proves nothing.
    await publishTxt(domain, ["v=spf1 -all", "lookup-verification=somebody-else"]);
    const refused = await browser.postForm("/portal/corrections/brands/verify", { domain });
    expect(refused.status).toBe(404);
    expect(await textOf(refused)).toContain("No proof found");
    expect(await statusOf(domain)).toMatchObject({ status: "pending" });
    expect(await companyName(key, domain)).toBe("Old Name");
    expect(assetKeyOf((await lookup(someone, domain)).headers.get("location")!)).toBe(catalogueKey);

    await publishTxt(domain, ["v=spf1 -all", token]);
    expect((await browser.postForm("/portal/corrections/brands/verify", { domain })).status).toBe(303);
    expect(await statusOf(domain)).toMatchObject({ status: "verified", method: "dns" });

    const grey = darkLogo40x20().files.grey!;
    expect((await uploadLogo(browser, domain, grey)).status).toBe(303);
    expect((await browser.postForm(`/portal/corrections/brands/${domain}`, { name: "New Name", brandColor: "#112233" })).status).toBe(303);

    const served = await lookup(someone, domain);
    expect(served.headers.get("x-logo-source")).toBe("owner");
    expect(assetKeyOf(served.headers.get("location")!)).not.toBe(catalogueKey);
    expect(await companyName(key, domain)).toBe("New Name");

    const log = (await (await exports.default.fetch(`${BASE}/v1/changes?domain=${domain}`)).json()) as {
      changes: { change: string; detail: string | null; method: string }[];
    };
    expect(log.changes.map((c) => [c.change, c.method])).toEqual(
      expect.arrayContaining([
        ["verified", "dns"],
        ["icon", "dns"],
        ["name", "dns"],
        ["brand_color", "dns"],
      ]),
    );
    expect(log.changes.find((c) => c.change === "name")?.detail).toBe("New Name");
    const page = await exports.default.fetch(`${BASE}/changes?domain=${domain}`, { headers: { Accept: "text/html" } });
    expect(page.status).toBe(200);
    expect(await textOf(page)).toContain("New Name");
    // The landing page leads to it.
    const landing = await exports.default.fetch(`${BASE}/`, { headers: { Accept: "text/html" } });
    expect(await landing.text()).toContain('<a href="/changes">Change log</a>');

    // The proof is checked again a day on; still there, the brand stays.
    const verifiedAt = Date.now();
    await runSchedule(verifiedAt + CLAIM_RECHECK_MS + 1);
    expect(await statusOf(domain)).toMatchObject({ status: "verified" });

    // The record gone (and no file on the site), the next check lapses the claim and the brand.
    await removeTxt(domain);
    await runSchedule(verifiedAt + 2 * CLAIM_RECHECK_MS + 2);
    expect(await statusOf(domain)).toMatchObject({ status: "lapsed" });
    const after = await lookup(someone, domain);
    expect(after.headers.get("x-logo-source")).toBe("catalogue");
    expect(assetKeyOf(after.headers.get("location")!)).toBe(catalogueKey);
    expect(await companyName(key, domain)).toBe("Old Name");
    const lapsed = (await (await exports.default.fetch(`${BASE}/v1/changes?domain=${domain}`)).json()) as { changes: { change: string }[] };
    expect(lapsed.changes[0]).toMatchObject({ change: "lapsed" });
    expect((await browser.postForm(`/portal/corrections/brands/${domain}`, { name: "Again" })).status).toBe(403);
  });

  it("verified by the .well-known file, and a resolver that fails proves nothing either way", async () => {
    const site = await claimSite({});
    const domain = site.host;
    await company("File Co", [domain]);
    const { browser } = await signedUp();
    await browser.postForm("/portal/corrections/brands", { domain });
    const token = await tokenOf(domain);

    await site.set({ "/.well-known/logo-lookup.txt": { type: "text/plain", body: "someone-else\n" } });
    expect((await browser.postForm("/portal/corrections/brands/verify", { domain })).status).toBe(404);

    await site.set({ "/.well-known/logo-lookup.txt": { type: "text/plain", body: `# logo-lookup\n${token}\n` } });
    expect((await browser.postForm("/portal/corrections/brands/verify", { domain })).status).toBe(303);
    expect(await statusOf(domain)).toMatchObject({ status: "verified", method: "well_known" });
    expect((await site.requests()).map((r) => r.path)).toContain("/.well-known/logo-lookup.txt");

    // A second account cannot verify the same domain while the first holds it.
    const other = await signedUp();
    await other.browser.postForm("/portal/corrections/brands", { domain });
    expect((await other.browser.postForm("/portal/corrections/brands/verify", { domain })).status).toBe(409);

    // The site down at the re-check is not the proof gone: the claim stands.
    await fetch(`${env.DNS_FAKE_CONTROL}/failing/_logo-lookup.${domain}`, { method: "PUT" });
    await site.set({ "/.well-known/logo-lookup.txt": { status: 503, body: "down" } });
    await runSchedule(Date.now() + CLAIM_RECHECK_MS + 1);
    expect(await statusOf(domain)).toMatchObject({ status: "verified" });
  });

  it("is refused for what is not a domain", async () => {
    const { browser } = await signedUp();
    const response = await browser.postForm("/portal/corrections/brands", { domain: "not a domain" });
    expect(response.status).toBe(400);
    expect(await db.select().from(brandClaims).all()).toEqual([]);
  });
});
