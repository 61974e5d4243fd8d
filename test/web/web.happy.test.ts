import { env, exports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { apiKeys, billingAccounts } from "../../schema";
import { deliver, event, sentToStripe, subscription } from "../billing/helpers";
import { addCompany, db } from "../helpers/catalogue";
import { darkLogo40x20 } from "../fixtures/images";
import { fetchWith, freshCompany } from "../lookup/helpers";
import { authorizeUrl, mcpAccount, pkcePair, registerClient, tokensFor } from "../oauth/helpers";
import { reresolve } from "../../src/catalogue/resolveLogo";
import { revokeKey } from "../../src/keys/apiKeys";
import { verifyKey } from "../../src/keys/verify";
import { admitCompanies } from "../../src/limits/companyQuotaClient";
import { discoveryAsker, spendDiscovery } from "../../src/limits/discoveryLimits";
import { readVars } from "../../src/env";
import { consumeLookup } from "../../src/limits/lookupLimits";
import { countMcpRequest } from "../../src/limits/mcpLimits";
import { oauthHelpers } from "../../src/oauth/authorizationServer";
import { BASE, Browser, createdKeyOf, insertedKeys, PASSWORD, signedUp, textOf } from "./helpers";

const today = () => new Date().toISOString().slice(0, 10);

async function createKey(browser: Browser, fields: Record<string, string> = { type: "publishable" }) {
  const response = await browser.postForm("/portal/keys", fields);
  expect(response.status).toBe(201);
  const key = createdKeyOf(await response.text());
  expect(key).toBeDefined();
  return key!;
}

const accountIdOf = async (browser: Browser) =>
  ((await (await browser.fetch("/apiaas/whoami")).json()) as { account: { id: string } }).account.id;

describe("sign-up and sign-in", () => {
  it("creates a Free account, signs it in, and the sign-in page then signs in again", async () => {
    const { browser, email } = await signedUp();
    const dashboard = await textOf(await browser.fetch("/portal?welcome=1"));
    expect(dashboard).toContain("Your account is ready");
    expect(dashboard).toContain("Plan Free");
    expect(dashboard).toContain(email);

    const out = await browser.postForm("/portal/logout", {});
    expect(out.status).toBe(303);
    expect((await browser.fetch("/portal")).status).toBe(303);
    const back = await browser.postForm("/portal/login", { email: email.toUpperCase(), password: PASSWORD, next: "/portal/usage" });
    expect(back.status).toBe(303);
    expect(back.headers.get("location")).toBe("/portal/usage");
    expect((await browser.fetch("/portal/usage")).status).toBe(200);
  });

  it("changes the password with the current one, signing every other browser out", async () => {
    const { browser, email } = await signedUp();
    const elsewhere = new Browser();
    expect((await elsewhere.postForm("/portal/login", { email, password: PASSWORD })).status).toBe(303);
    expect((await browser.fetch("/portal/password")).status).toBe(200);

    const wrong = await browser.postForm("/portal/password", { current: "not the password", password: "a brand new passphrase" });
    expect(wrong.status).toBe(401);
    expect(await textOf(wrong)).toContain("The current password is not right.");
    const short = await browser.postForm("/portal/password", { current: PASSWORD, password: "short" });
    expect(short.status).toBe(400);
    expect(await textOf(short)).toContain("The password must be at least 10 characters.");

    const changed = await browser.postForm("/portal/password", { current: PASSWORD, password: "a brand new passphrase" });
    expect(changed.status).toBe(303);
    expect(await textOf(await browser.fetch(changed.headers.get("location")!))).toContain(
      "Password changed. Other browsers were signed out. MCP connections and keys stay",
    );
    expect((await browser.fetch("/portal")).status).toBe(200);
    expect((await elsewhere.fetch("/portal")).status).toBe(303);
    expect((await new Browser().postForm("/portal/login", { email, password: PASSWORD })).status).toBe(401);
    expect((await new Browser().postForm("/portal/login", { email, password: "a brand new passphrase" })).status).toBe(303);
  });

  it("sends a signed-out browser to sign in and back to the page it asked for", async () => {
    const response = await new Browser().fetch("/portal/usage?x=1");
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe(`/portal/login?next=${encodeURIComponent("/portal/usage?x=1")}`);
    const page = await new Browser().fetch(response.headers.get("location")!);
    expect(await page.text()).toContain('name="next" value="/portal/usage?x=1"');
  });
});

describe("keys", () => {
  it("shows a new key once, then lists it by prefix and last four characters with its settings", async () => {
    const { browser } = await signedUp();
    const created = await browser.postForm("/portal/keys", {
      type: "publishable",
      origins: "https://shop.example.com\nhttps://www.example.com/",
      attribution: "required",
    });
    const html = await created.text();
    const key = createdKeyOf(html)!;
    expect(key).toMatch(/^pk_/);
    expect(created.headers.get("cache-control")).toBe("no-store");

    const listing = await browser.fetch("/portal/keys");
    const page = await listing.text();
    expect(page).not.toContain(key);
    const text = await textOf(new Response(page));
    expect(text).toContain(`${key.slice(0, 9)}…${key.slice(-4)} publishable`);
    expect(text).toContain("https://shop.example.com, https://www.example.com");
    expect(text).toContain("required");
    expect(text).toContain("never");
  });

  it("creates secret keys for servers", async () => {
    const { browser } = await signedUp();
    const key = await createKey(browser, { type: "secret" });
    expect(key).toMatch(/^sk_/);
    const search = await exports.default.fetch(`${BASE}/v1/companies/search?q=x`, { headers: { Authorization: `Bearer ${key}` } });
    expect(search.status).toBe(200);
  });

  it("notes when a key was last used, off the warm path", async () => {
    const { browser } = await signedUp();
    const key = await createKey(browser);
    const { domain } = await freshCompany();
    expect((await exports.default.fetch(`${BASE}/${domain}?token=${key}`, { redirect: "manual" })).status).toBe(302);
    await vi.waitFor(async () => {
      const row = await db.query.apiKeys.findFirst({ where: eq(apiKeys.prefix, key.slice(0, 9)) });
      expect(row?.lastUsedAt).toBeInstanceOf(Date);
    });
    // Created, then last used: two times, then the origins.
    expect(await textOf(await browser.fetch("/portal/keys"))).toMatch(/publishable \S+ \S+ UTC \S+ \S+ UTC any/);
  });

  it("revokes a key after a confirmation page; this server refuses it at once", async () => {
    const { browser } = await signedUp();
    const key = await createKey(browser);
    const { domain } = await freshCompany();
    expect((await exports.default.fetch(`${BASE}/${domain}?token=${key}`, { redirect: "manual" })).status).toBe(302);
    const id = /href="\/portal\/keys\/([\w-]+)\/revoke"/.exec(await (await browser.fetch("/portal/keys")).text())![1]!;

    const confirm = await textOf(await browser.fetch(`/portal/keys/${id}/revoke`));
    expect(confirm).toContain(`Revoke ${key.slice(0, 9)}…${key.slice(-4)}?`);
    expect(confirm).toContain("within 10 seconds");
    const revoked = await browser.postForm(`/portal/keys/${id}/revoke`, {});
    expect(revoked.status).toBe(303);
    expect(await textOf(await browser.fetch(revoked.headers.get("location")!))).toContain("is revoked");
    const refused = await exports.default.fetch(`${BASE}/${domain}?token=${key}`, { redirect: "manual" });
    expect(refused.status).toBe(401);
  });

  it("revokes a key the listing does not reach, of an account holding more than it shows", async () => {
    const { browser } = await signedUp();
    const [oldest] = await insertedKeys(await accountIdOf(browser), 101);
    expect(await (await browser.fetch("/portal/keys")).text()).not.toContain(`/portal/keys/${oldest}/revoke`);
    const confirm = await browser.fetch(`/portal/keys/${oldest}/revoke`);
    expect(confirm.status).toBe(200);
    expect(await textOf(confirm)).toMatch(/Revoke pk_\w{6}…\w{4}\?/);
    const revoked = await browser.postForm(`/portal/keys/${oldest}/revoke`, {});
    expect(revoked.status).toBe(303);
    expect(await textOf(await browser.fetch(revoked.headers.get("location")!))).toMatch(/pk_\w{6}…\w{4} is revoked/);
  });
});

describe("playground and usage", () => {
  it("counts each playground image as one lookup of the chosen key, and reports it by day with MCP calls and companies", async () => {
    const { browser } = await signedUp();
    const key = await createKey(browser);
    const { domain, name } = await freshCompany();
    const page = await browser.fetch(`/portal?domain=${encodeURIComponent(`https://www.${domain}/`)}`);
    const html = await page.text();
    expect(html).toContain(name);
    const images = [...html.matchAll(/src="(\/portal\/playground\/logo\?[^"]+)"/g)].map((m) => m[1]!.replace(/&amp;/g, "&"));
    // Three sizes on two pages, and the other formats at 128 px (a raster logo has no SVG).
    expect(images).toHaveLength(9);
    const locations = [];
    for (const src of images) {
      const image = await browser.fetch(src);
      expect(image.status).toBe(302);
      expect(image.headers.get("cache-control")).toBe("no-store");
      locations.push(image.headers.get("location"));
    }
    // Ladder widths, served as asked without a signature; each format as the lookup redirects to it.
    expect(locations.filter((l) => /^\/assets\/[\w-]+\?width=(32|64|128)$/.test(l!))).toHaveLength(6);
    for (const format of ["webp", "avif", "jpg"]) {
      expect(
        locations.filter((l) => new RegExp(`^/assets/[\\w-]+\\?width=128&format=${format}$`).test(l!)),
        format,
      ).toHaveLength(1);
    }
    expect(html).toContain(`token=${key.slice(0, 9)}…${key.slice(-4)}&amp;size=128`);

    const accountId = await accountIdOf(browser);
    await countMcpRequest(env, accountId, "free", "seven");
    await countMcpRequest(env, accountId, "free", "three");
    await admitCompanies(env, accountId, "free", [1, 2, 3]);
    await spendDiscovery(env, discoveryAsker(readVars(env), { accountId, plan: "free", emailConfirmed: false, address: null }));

    const usage = await textOf(await browser.fetch("/portal/usage"));
    expect(usage).toContain(`${today()} 9 9 2 3`);
    const csv = await browser.fetch("/portal/usage.csv");
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(csv.headers.get("content-disposition")).toMatch(/^attachment; filename="usage-\d{4}-\d{2}-\d{2}\.csv"$/);
    const bytes = new Uint8Array(await csv.arrayBuffer());
    // A byte-order mark first, so that a spreadsheet reads the labels' "…" as UTF-8.
    expect([...bytes.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const rows = new TextDecoder().decode(bytes).trim().split("\r\n");
    expect(rows[0]).toBe(`date,lookups ${key.slice(0, 9)}…${key.slice(-4)},lookups,mcp_calls,companies`);
    expect(rows).toHaveLength(31);
    expect(rows.at(-1)).toBe(`${today()},9,9,2,3`);

    const dashboard = await textOf(await browser.fetch("/portal"));
    expect(dashboard).toContain("Lookups this month 9");
    expect(dashboard).toContain("MCP calls today 2");
    expect(dashboard).toContain("Companies today 3");
    expect(dashboard).toContain("Domains discovered today 1");
  });

  it("measures every key's lookups this month, revoked ones included, against the plan's monthly quota", async () => {
    const { browser } = await signedUp();
    const [quiet, busy, revoked] = [await createKey(browser), await createKey(browser), await createKey(browser)];
    const lookups = async (key: string, times: number) => {
      for (let i = 0; i < times; i++) await consumeLookup(env, (await verifyKey(db, key))!, { leaseSize: 1 });
    };
    await lookups(quiet, 1);
    await lookups(busy, 2);
    await lookups(revoked, 3);
    await revokeKey(db, revoked);

    const html = await (await browser.fetch("/portal")).text();
    expect(await textOf(new Response(html))).toMatch(
      /Lookups this month 6 All keys together, revoked ones included: 6 of the plan's 500,000, until .+\. Each key may make 600 a minute\./,
    );
    expect(html).toContain('<meter id="lookups-meter" min="0" max="500000" value="6" aria-labelledby="lookups-quota">');
  });

  it("counts a revoked key's lookups in the totals, however many keys came after it", async () => {
    const { browser } = await signedUp();
    const key = await createKey(browser);
    for (let i = 0; i < 5; i++) await consumeLookup(env, (await verifyKey(db, key))!, { leaseSize: 1 });
    expect((await revokeKey(db, key)).ok).toBe(true);
    // More live keys than a listing shows (an account from before the cap): the revoked one is past them.
    await insertedKeys(await accountIdOf(browser), 100);

    expect(await textOf(await browser.fetch("/portal"))).toContain("Lookups this month 5");
    const rows = (await (await browser.fetch("/portal/usage.csv")).text()).trim().split("\r\n");
    expect(rows[0]).toContain(`lookups ${key.slice(0, 9)}…${key.slice(-4)}`);
    expect(rows.at(-1)).toMatch(new RegExp(`^${today()},.*,5,0,0$`));
  });

  it("shows a visitor on the landing page the public asset URLs, without an account", async () => {
    const { domain, name } = await freshCompany();
    const response = await exports.default.fetch(`${BASE}/?domain=${domain}`, { headers: { Accept: "text/html" } });
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain(name);
    const sources = [...html.matchAll(/src="(https:\/\/logos\.test\/assets\/[^"]+)"/g)].map((m) => m[1]!.replace(/&amp;/g, "&"));
    // Three sizes on two pages, and the other formats at 128 px.
    expect(sources).toHaveLength(9);
    for (const format of ["webp", "avif", "jpg"])
      expect(
        sources.filter((src) => src.endsWith(`&format=${format}`)),
        format,
      ).toHaveLength(1);
    expect(html).toContain("token=YOUR_PUBLISHABLE_KEY");
  });
});

describe("the landing page", () => {
  it("shows the catalogue's logos on light and dark, never a discovered one, and snippets with the deployment's address", async () => {
    await addCompany({ name: "Figma", domains: ["figma.com"] }, darkLogo40x20());
    await addCompany({ name: "Shopify Site", domains: ["shopify.com"], sourceSet: "discovered", prominence: -1 }, darkLogo40x20());
    // Another test's landing page may have remembered them as misses: resolved afresh, as an import's lookups are within minutes.
    for (const domain of ["figma.com", "shopify.com"]) await reresolve(db, { kind: "domain", value: domain });
    const response = await fetchWith({ PUBLIC_BASE_URL: "https://logos.example.com" }, `${BASE}/`, { headers: { Accept: "text/html" } });
    expect(response.status).toBe(200);
    const html = await response.text();
    const wall = (page: string) => new RegExp(`<ul class="wall swatch ${page}"[^>]*>([\\s\\S]*?)</ul>`).exec(html)?.[1] ?? "";
    for (const page of ["light", "dark"]) {
      expect(wall(page), page).toMatch(/<img src="https:\/\/logos\.example\.com\/assets\/[\w-]+\?width=48" alt="Figma"/);
      expect(wall(page), page).not.toContain("Shopify");
    }
    // The dark page's image is the logo's dark rendition, not the light one again.
    expect(wall("light").match(/assets\/([\w-]+)/)![1]).not.toBe(wall("dark").match(/assets\/([\w-]+)/)![1]);
    const text = await textOf(new Response(html));
    expect(text).toContain('<img src="https://logos.example.com/figma.com?token=YOUR_PUBLISHABLE_KEY&size=128" alt="Figma logo"');
    expect(text).toContain('new LogoLookup({ baseUrl: "https://logos.example.com"');
    expect(text).toContain('"url": "https://logos.example.com/mcp"');
    expect(text).toContain("Growth $99 a month 25,000,000 lookups a month 20,000 lookups a minute per key");
  });

  it("links the guides where DOCS_URL says, and the API reference always", async () => {
    const plain = await (await fetchWith({}, `${BASE}/`, { headers: { Accept: "text/html" } })).text();
    expect(plain).toContain('href="/docs"');
    expect(plain).not.toContain(">Guides<");
    const linked = await (
      await fetchWith({ DOCS_URL: "https://docs.example.com/logo-lookup" }, `${BASE}/`, { headers: { Accept: "text/html" } })
    ).text();
    expect(linked).toContain('<a href="https://docs.example.com/logo-lookup">Guides</a>');
  });
});

describe("plan and billing", () => {
  it("lists the plans with their limits and prices, and Upgrade goes to Stripe Checkout", async () => {
    const { browser } = await signedUp();
    const page = await textOf(await browser.fetch("/portal/billing"));
    expect(page).toContain("Launch $29 a month 5,000,000 lookups a month 3,000 lookups a minute per key");
    expect(page).toContain("Enterprise Custom");
    const upgrade = await browser.postForm("/portal/billing/checkout", { plan: "launch" });
    expect(upgrade.status).toBe(303);
    const url = upgrade.headers.get("location")!;
    expect(url).toMatch(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/);
    const sent = await sentToStripe(url.split("/").pop()!);
    expect(sent.success_url).toBe(`${BASE}/portal/billing?checkout=success&session_id={CHECKOUT_SESSION_ID}`);
    expect(sent.cancel_url).toBe(`${BASE}/portal/billing?checkout=cancelled`);

    expect(await textOf(await browser.fetch("/portal/billing?checkout=cancelled"))).toContain("Checkout cancelled");
    const id = url.split("/").pop()!;
    expect(await textOf(await browser.fetch(`/portal/billing?checkout=success&session_id=${id}`))).toContain(
      "This checkout is not complete yet",
    );
    await fetch(`${env.STRIPE_API_BASE}/_complete/${id}`, { method: "POST" });
    expect(await textOf(await browser.fetch(`/portal/billing?checkout=success&session_id=${id}`))).toContain(
      "Payment received. Your plan changes to Launch",
    );
  });

  it("a paying account changes plan in Stripe's customer portal: Change plan instead of Upgrade", async () => {
    const { browser } = await signedUp();
    await deliver(event("customer.subscription.created", subscription(await accountIdOf(browser))));
    const html = await (await browser.fetch("/portal/billing")).text();
    const page = await textOf(new Response(html));
    expect(page).toContain("Your plan: Launch");
    expect(page).toContain("Manage billing Plan changes, card, invoices and cancellation, on Stripe.");
    expect(page).not.toContain("Upgrade");
    expect(html).not.toContain('action="/portal/billing/checkout"');
    expect(html).toContain(
      `<form method="post" action="/portal/billing/manage"><button type="submit" aria-label="Change plan to Growth (in Stripe&#39;s customer portal)">`,
    );
    const change = await browser.postForm("/portal/billing/manage", {});
    expect(change.status).toBe(303);
    expect(change.headers.get("location")).toMatch(/^https:\/\/billing\.stripe\.com\/p\/session\/test_\w+$/);
  });

  it("says when a paying subscription renews, and nothing of the kind once Stripe has ended it", async () => {
    for (const [type, status] of [
      ["customer.subscription.deleted", "canceled"],
      ["customer.subscription.updated", "unpaid"],
    ] as const) {
      const { browser } = await signedUp();
      const accountId = await accountIdOf(browser);
      const ids = { id: `sub_${crypto.randomUUID()}`, customer: `cus_${crypto.randomUUID()}` };
      await deliver(event("customer.subscription.created", subscription(accountId, ids)));
      expect(await textOf(await browser.fetch("/portal/billing"))).toMatch(
        /Your plan: Launch Subscription active Renews \d{4}-\d{2}-\d{2}/,
      );
      // Ended at once, or after failed payments: Stripe keeps the period's end, with cancel_at_period_end false.
      await deliver(event(type, subscription(accountId, { ...ids, status })));
      const page = await textOf(await browser.fetch("/portal/billing"));
      expect(page).toContain(`Your plan: Free Subscription ${status} Manage billing`);
      expect(page).not.toMatch(/Renews|Ends/);
    }
  });

  it("Manage billing opens Stripe's customer portal for an account with a customer", async () => {
    const { browser } = await signedUp();
    const accountId = await accountIdOf(browser);
    await db.insert(billingAccounts).values({
      accountId,
      stripeCustomerId: "cus_portal_1",
      status: "active",
      plan: "launch",
      stateAt: 1,
      lastEventId: "evt_1",
      updatedAt: new Date(),
    });
    const manage = await browser.postForm("/portal/billing/manage", {});
    expect(manage.status).toBe(303);
    const url = manage.headers.get("location")!;
    expect(url).toMatch(/^https:\/\/billing\.stripe\.com\/p\/session\/test_\w+$/);
    const sent = await sentToStripe(`bps_${url.split("test_").pop()}`);
    expect(sent).toEqual({ customer: "cus_portal_1", return_url: `${BASE}/portal/billing` });
  });
});

describe("connections", () => {
  it("lists the MCP clients the account approved, and Disconnect stops their tokens at once", async () => {
    const account = await mcpAccount();
    const tokens = await tokensFor(account.email);
    const mcp = (token: string) =>
      exports.default.fetch(`${BASE}/mcp`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
    expect((await mcp(tokens.access_token)).status).toBe(200);

    const browser = new Browser();
    await browser.postForm("/portal/login", { email: account.email, password: PASSWORD });
    const listed = await browser.fetch("/portal/connections");
    const html = await listed.text();
    const text = await textOf(new Response(html));
    expect(text).toContain(
      "Test Agent 127.0.0.1:33418 Search for company logos and fetch them, counted against your plan Stay connected without signing in again (refresh tokens)",
    );
    const action = /action="(\/portal\/connections\/[^"]+\/disconnect)"/.exec(html)![1]!;

    const disconnected = await browser.postForm(action, {});
    expect(disconnected.status).toBe(303);
    expect(await textOf(await browser.fetch(disconnected.headers.get("location")!))).toContain("No connected applications");
    expect((await mcp(tokens.access_token)).status).toBe(401);
    const refreshed = await exports.default.fetch(`${BASE}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: tokens.refresh_token,
        client_id: tokens.clientId,
      }).toString(),
    });
    expect(refreshed.status).toBe(400);
  });

  it("lists every connection, past the library's first page of grants, and disconnects any of them", async () => {
    const account = await mcpAccount();
    const helpers = oauthHelpers(env, BASE);
    const clientId = await registerClient();
    for (let i = 0; i < 101; i++) {
      const request = await helpers.parseAuthRequest(new Request(authorizeUrl(clientId, (await pkcePair()).challenge)));
      await helpers.completeAuthorization({
        request,
        userId: account.id,
        metadata: {},
        scope: request.scope,
        props: { accountId: account.id },
        revokeExistingGrants: false,
      });
    }
    const browser = new Browser();
    await browser.postForm("/portal/login", { email: account.email, password: PASSWORD });
    const actions = async () =>
      [...(await (await browser.fetch("/portal/connections")).text()).matchAll(/action="(\/portal\/connections\/[^"]+\/disconnect)"/g)].map(
        (m) => m[1]!,
      );
    const listed = await actions();
    expect(listed).toHaveLength(101);

    // The grant the library lists last: beyond its first page of a hundred.
    const last = listed.sort().at(-1)!;
    expect((await browser.postForm(last, {})).status).toBe(303);
    expect(await actions()).toHaveLength(100);
    expect(await actions()).not.toContain(last);
  });
});
