import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { rest } from "../api/helpers";
import { darkLogo40x20, redPng } from "../fixtures/images";
import { eq } from "drizzle-orm";
import { accounts } from "../../schema";
import { addAccount, addKey, db } from "../helpers/catalogue";
import { signedUp, textOf } from "../web/helpers";
import { assetKeyOf, BASE } from "../lookup/helpers";
import { agent, company, structured } from "../mcp/helpers";

/**
 * Account overrides (issue 41, "Account overrides"; docs/corrections.md): an account pins its
 * own logo for a domain with PUT /v1/overrides/{domain}; its lookups, REST answers and MCP
 * tools answer it (X-Logo-Source: override) at once, and another account still sees the
 * catalogue's. The upload is checked as an import is.
 */
const png = () => darkLogo40x20().files.master;
const svg = new TextEncoder().encode(
  '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64"><rect width="64" height="64" fill="#c00"/><script>alert(1)</script></svg>',
);

const put = (key: string, domain: string, body: Uint8Array, type = "image/png") =>
  rest(`/v1/overrides/${domain}`, key, { method: "PUT", headers: { "Content-Type": type }, body });
const lookup = (token: string, domain: string) => exports.default.fetch(`${BASE}/${domain}?token=${token}`, { redirect: "manual" });

async function accountWithKeys() {
  const account = await addAccount("launch");
  const [secret, publishable] = await Promise.all([addKey(account.id, { type: "secret" }), addKey(account.id, { type: "publishable" })]);
  return { account, secret, publishable };
}

describe("an account's override", () => {
  it("answers that account's lookups and REST, and nobody else's, until it is removed", async () => {
    await company("Pinned Co", ["pinned-co.com"]);
    const mine = await accountWithKeys();
    const theirs = await accountWithKeys();
    const catalogueKey = assetKeyOf((await lookup(theirs.publishable, "pinned-co.com")).headers.get("location")!);
    // Warm in this isolate before the override: the change must still reach it.
    expect(assetKeyOf((await lookup(mine.publishable, "pinned-co.com")).headers.get("location")!)).toBe(catalogueKey);

    const pinned = await put(mine.secret, "pinned-co.com", png());
    expect(pinned.status).toBe(201);
    const body = (await pinned.json()) as { domain: string; url: string; width: number; height: number };
    expect(body).toMatchObject({ domain: "pinned-co.com", width: 40, height: 20 });
    expect((await exports.default.fetch(body.url)).status).toBe(200);

    const own = await lookup(mine.publishable, "pinned-co.com");
    expect(own.status).toBe(302);
    expect(own.headers.get("x-logo-source")).toBe("override");
    expect(assetKeyOf(own.headers.get("location")!)).not.toBe(catalogueKey);
    const bySecret = await rest("/pinned-co.com", mine.secret, { redirect: "manual" });
    expect(bySecret.headers.get("x-logo-source")).toBe("override");
    expect(bySecret.headers.get("x-logo-updated")).toMatch(/GMT$/);

    const other = await lookup(theirs.publishable, "pinned-co.com");
    expect(other.headers.get("x-logo-source")).toBe("catalogue");
    expect(assetKeyOf(other.headers.get("location")!)).toBe(catalogueKey);

    const restMine = (await (await rest("/v1/companies/lookup?domain=pinned-co.com", mine.secret)).json()) as { override: unknown };
    expect(restMine.override).toMatchObject({ url: body.url, width: 40, height: 20 });
    const restTheirs = (await (await rest("/v1/companies/lookup?domain=pinned-co.com", theirs.secret)).json()) as { override: unknown };
    expect(restTheirs.override).toBeNull();

    expect(await (await rest("/v1/overrides", mine.secret)).json()).toMatchObject({ overrides: [{ domain: "pinned-co.com" }] });
    expect(await (await rest("/v1/overrides", theirs.secret)).json()).toEqual({ overrides: [] });
    // Another account can neither see nor remove it.
    expect((await rest("/v1/overrides/pinned-co.com", theirs.secret, { method: "DELETE" })).status).toBe(404);
    expect((await lookup(mine.publishable, "pinned-co.com")).headers.get("x-logo-source")).toBe("override");

    // Replacing it answers 200, and the new image is served.
    const again = await put(mine.secret, "pinned-co.com", svg, "image/svg+xml");
    expect(again.status).toBe(200);
    const replacedKey = assetKeyOf((await lookup(mine.publishable, "pinned-co.com")).headers.get("location")!);
    expect(replacedKey).not.toBe(assetKeyOf(own.headers.get("location")!));

    expect((await rest("/v1/overrides/pinned-co.com", mine.secret, { method: "DELETE" })).status).toBe(204);
    const back = await lookup(mine.publishable, "pinned-co.com");
    expect(back.headers.get("x-logo-source")).toBe("catalogue");
    expect(assetKeyOf(back.headers.get("location")!)).toBe(catalogueKey);
    expect((await rest("/v1/overrides/pinned-co.com", mine.secret, { method: "DELETE" })).status).toBe(404);
  });

  it("answers the account's MCP tools, while another agent sees the catalogue", async () => {
    await company("Agent Pinned", ["agent-pinned.com"]);
    const mine = await agent("launch");
    const theirs = await agent("launch");
    const secret = await addKey(mine.account.id, { type: "secret" });
    expect((await put(secret, "agent-pinned.com", png())).status).toBe(201);

    type Fetched = { url: string; logoId: number };
    const own = structured<Fetched>(await mine.call("fetch_logo", { query: "agent-pinned.com" }));
    const other = structured<Fetched>(await theirs.call("fetch_logo", { query: "agent-pinned.com" }));
    expect(own.url).not.toBe(other.url);
    expect(assetKeyOf(own.url)).toMatch(/\.override-/);
    expect(assetKeyOf(other.url)).not.toMatch(/override-/);
    expect((await exports.default.fetch(own.url)).status).toBe(200);
  });

  it("is uploaded from the portal's Corrections page, and removed there", async () => {
    await company("Portal Pinned", ["portal-pinned.com"]);
    const { browser, email } = await signedUp();
    const form = new FormData();
    form.set("domain", "portal-pinned.com");
    form.set("file", new File([png()], "mine.png", { type: "image/png" }));
    const uploaded = await browser.fetch("/portal/corrections/overrides", { method: "POST", body: form });
    expect(uploaded.status).toBe(303);
    const page = await textOf(await browser.fetch("/portal/corrections"));
    expect(page).toContain("portal-pinned.com");

    const account = (await db.select({ id: accounts.id }).from(accounts).where(eq(accounts.email, email)).get())!;
    const publishable = await addKey(account.id, { type: "publishable" });
    expect((await lookup(publishable, "portal-pinned.com")).headers.get("x-logo-source")).toBe("override");

    const bad = new FormData();
    bad.set("domain", "portal-pinned.com");
    bad.set("file", new File([redPng], "tiny.png", { type: "image/png" }));
    const refused = await browser.fetch("/portal/corrections/overrides", { method: "POST", body: bad });
    expect(refused.status).toBe(400);
    expect(await textOf(refused)).toContain("at least 16 px");

    expect((await browser.postForm("/portal/corrections/overrides/remove", { domain: "portal-pinned.com" })).status).toBe(303);
    expect((await lookup(publishable, "portal-pinned.com")).headers.get("x-logo-source")).toBe("catalogue");
  });

  it("refuses what imports refuse, and keys that may not pin", async () => {
    const mine = await accountWithKeys();
    const error = async (response: Response) => ({ status: response.status, body: (await response.json()) as { error: string } });
    expect(await error(await put(mine.secret, "acme.com", redPng))).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/at least 16 px/) },
    });
    expect(await error(await put(mine.secret, "acme.com", png(), "text/plain"))).toMatchObject({ status: 400 });
    expect(await error(await put(mine.secret, "acme.com", png(), "image/svg+xml"))).toMatchObject({
      status: 400,
      body: { error: "The image is PNG, not image/svg+xml" },
    });
    expect(await error(await put(mine.secret, "acme.com", new TextEncoder().encode("<svg><foo"), "image/svg+xml"))).toMatchObject({
      status: 400,
    });
    expect(await error(await put(mine.secret, "acme.com", new Uint8Array(1024 * 1024 + 1)))).toMatchObject({ status: 413 });
    expect(await error(await put(mine.secret, "not_a_domain", png()))).toMatchObject({ status: 400 });
    expect((await put(mine.publishable, "acme.com", png())).status).toBe(401);
    expect((await put("", "acme.com", png())).status).toBe(401);
    expect(await (await rest("/v1/overrides", mine.secret)).json()).toEqual({ overrides: [] });
  });
});
