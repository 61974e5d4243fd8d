import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { AxeBuilder } from "@axe-core/playwright";
import type { Browser, BrowserContext, Page } from "playwright-core";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../tools/platform";
import { launchChromium } from "./chromium";
import { type RunningWorker, STRIPE_WEBHOOK_SECRET, startWorker } from "./worker";

/**
 * The portal in a real browser (Chromium through playwright-core) against the Worker on
 * workerd: one customer's journey, step by step in one browser, from the landing page to
 * disconnecting an MCP client. Every page visited is checked with axe-core (no serious or
 * critical violation), for layout shift, for width at 360 px, and photographed at desktop and
 * 360 px widths into test/browser/screenshots/ (not committed) for review.
 */
const SHOTS = join(projectRoot, "test", "browser", "screenshots");
const PASSWORD = "a long enough password";
// Long, as some are: the header that shows it must still fit a phone's width.
const EMAIL = `customer.relations.department.journey-${Date.now()}@subsidiary-example.com`;
const REDIRECT_URI = "http://127.0.0.1:33418/callback";

let worker: RunningWorker;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** What the pages' Content Security Policy refused, as the browser reported it. */
const refusals: string[] = [];

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  [worker, browser] = await Promise.all([startWorker(), launchChromium()]);
  context = await browser.newContext({ baseURL: worker.base, colorScheme: "light", viewport: { width: 1280, height: 800 } });
  // Failures surface in seconds rather than at the default 30.
  context.setDefaultTimeout(8_000);
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: worker.base });
  page = await context.newPage();
  watch(page);
});

afterAll(async () => {
  await browser?.close();
  await worker?.dispose();
});

function watch(p: Page) {
  p.on("console", (message) => {
    if (message.type() === "error" && /Content Security Policy/i.test(message.text())) refusals.push(message.text());
  });
  p.on("pageerror", (error) => refusals.push(`page error: ${error.message}`));
}

/** The checks every page gets, and its two screenshots. */
async function review(p: Page, name: string) {
  await p.waitForLoadState("load");
  const axe = await new AxeBuilder({ page: p }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]).analyze();
  const serious = axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(
    serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`),
    `axe on ${name}`,
  ).toEqual([]);
  // Cumulative layout shift since the page started loading.
  const shift = Number(
    await p.evaluate(`new Promise((resolve) => {
      let total = 0;
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) if (!entry.hadRecentInput) total += entry.value;
      }).observe({ type: "layout-shift", buffered: true });
      setTimeout(() => resolve(total), 50);
    })`),
  );
  expect(shift, `layout shift on ${name}`).toBeLessThan(0.01);
  await p.screenshot({ path: join(SHOTS, `${name}-desktop.png`), fullPage: true });
  await p.setViewportSize({ width: 360, height: 740 });
  expect(Number(await p.evaluate("document.documentElement.scrollWidth")), `width of ${name} at 360 px`).toBeLessThanOrEqual(360);
  await p.screenshot({ path: join(SHOTS, `${name}-360.png`), fullPage: true });
  await p.setViewportSize({ width: 1280, height: 800 });
}

/**
 * Clicks something that sends the browser to a host out of reach here (Stripe's pages, an MCP
 * client's local redirect endpoint): the address it was sent to, once the browser has shown its
 * error page for it (so that the next navigation is not cut short by that one).
 */
async function sentAway(p: Page, prefix: string, click: () => Promise<void>): Promise<URL> {
  const failed = p.waitForEvent("requestfailed", (request) => request.url().startsWith(prefix));
  await click();
  const request = await failed;
  await p.waitForURL((url) => url.protocol === "chrome-error:");
  return new URL(request.url());
}

const lookup = (path: string) => fetch(new URL(path, worker.base), { redirect: "manual" });

describe("a customer's journey through the portal", () => {
  let key = "";

  it("signs up from the landing page", async () => {
    const response = await page.goto("/");
    const csp = response!.headers()["content-security-policy"]!;
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    await page.getByRole("textbox", { name: "Domain" }).fill("github.com");
    await page.getByRole("button", { name: "Show logo" }).click();
    await expect
      .poll(() =>
        page
          .getByRole("img", { name: "GitHub logo, 128 pixels wide, on light" })
          .evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
      )
      .toBe(128);
    // The other formats side by side, each a real image of its own type.
    for (const format of ["WEBP", "AVIF", "JPG", "SVG"]) {
      await expect
        .poll(() =>
          page
            .getByRole("img", { name: `GitHub logo as ${format}, 128 pixels wide` })
            .evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
        )
        .toBeGreaterThan(0);
    }
    // The wall shows the catalogue's logos, real images on a light and a dark page.
    for (const page_ of ["light", "dark"]) {
      const wall = page.getByRole("list", { name: `Logos on a ${page_} page` });
      await expect
        .poll(() => wall.getByRole("img", { name: "GitHub" }).evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth))
        .toBe(48);
    }
    // Every snippet is written with this deployment's own address.
    for (const id of ["snippet-html", "snippet-curl", "snippet-sdk", "snippet-mcp"]) {
      expect(await page.locator(`#${id}`).textContent(), id).toContain(worker.base);
    }
    expect(JSON.parse((await page.locator("#snippet-mcp").textContent())!)).toEqual({
      mcpServers: { "logo-lookup": { url: `${worker.base}/mcp` } },
    });
    await page.getByRole("button", { name: "Copy" }).nth(3).click();
    await expect.poll(() => page.locator("#snippet-mcp-status").textContent()).toBe("Copied");
    expect(await page.evaluate("navigator.clipboard.readText()")).toContain(`${worker.base}/mcp`);
    // The plans, as billing sells them.
    expect(await page.getByRole("region", { name: "Plans" }).textContent()).toContain("Launch$29 a month5,000,000 lookups a month");
    await review(page, "landing");
    // A warning quoting what was typed, one long word, wraps too.
    await page.goto("/?domain=not_a_domain_because_it_is_a_very_long_unbroken_token_typed_by_someone");
    await review(page, "landing-warning");
    await page.goto("/");

    await page.getByRole("link", { name: "Create a free account" }).click();
    await review(page, "signup");
    await page.getByRole("textbox", { name: "Email" }).fill(EMAIL);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL("**/portal?welcome=1");
    await expect.poll(() => page.getByRole("status").textContent()).toContain("Your account is ready");
  });

  it("creates a publishable key, shown once with a copy button", async () => {
    await page.getByRole("link", { name: "Keys" }).click();
    await page.getByLabel("Allowed origins (publishable keys, optional)").fill("");
    await page.getByRole("button", { name: "Create key" }).click();
    key = await page.getByLabel("Key", { exact: true }).inputValue();
    expect(key).toMatch(/^pk_[0-9A-Za-z]{32}$/);
    await page.getByRole("button", { name: "Copy" }).click();
    await expect.poll(() => page.locator("#copy-status").textContent()).toBe("Copied");
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(key);
    await review(page, "keys");

    // Listed by prefix and last four characters only.
    await page.goto("/portal/keys");
    const label = `${key.slice(0, 9)}…${key.slice(-4)}`;
    await expect.poll(() => page.locator("td.key").first().textContent()).toBe(label);
    expect(await page.content()).not.toContain(key);
  });

  it("shows a real logo in the playground, each image a lookup with the key", async () => {
    await page.getByRole("link", { name: "Dashboard" }).click();
    await page.getByRole("textbox", { name: "Domain" }).fill("github.com");
    await page.getByRole("button", { name: "Show logo" }).click();
    const images = page.locator(".swatch img");
    await expect.poll(() => images.count()).toBe(6);
    for (const image of await images.all()) {
      await expect
        .poll(() => image.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth))
        .toBe(Number(await image.getAttribute("width")));
    }
    await expect.poll(() => page.locator("#snippet").textContent()).toContain(`token=${key.slice(0, 9)}…${key.slice(-4)}`);
    await review(page, "dashboard");
  });

  it("counts those lookups on the usage page, with a chart, a table and a CSV", async () => {
    await page.getByRole("link", { name: "Usage" }).click();
    const today = page.locator("tbody tr").first();
    expect(await today.locator("th").textContent()).toBe(new Date().toISOString().slice(0, 10));
    // The key's column, then lookups in all, MCP calls, companies.
    // Three sizes on two pages, and WebP, AVIF, JPG and SVG: ten lookups.
    expect(await today.locator("td").allTextContents()).toEqual(["10", "10", "0", "0"]);
    expect(await page.locator("svg.chart").count()).toBe(3);
    const download = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download CSV" }).click()]);
    const csv = await (await fetch(new URL("/portal/usage.csv", worker.base), { headers: { Cookie: await cookieHeader() } })).text();
    expect(download[0].suggestedFilename()).toMatch(/^usage-\d{4}-\d{2}-\d{2}\.csv$/);
    expect(csv.trim().split("\r\n").at(-1)).toBe(`${new Date().toISOString().slice(0, 10)},10,10,0,0`);
    await review(page, "usage");
  });

  it("revokes the key after a confirmation, and a lookup with it then answers 401", async () => {
    expect((await lookup(`/github.com?token=${key}`)).status).toBe(302);
    await page.getByRole("link", { name: "Keys" }).click();
    await page.getByRole("link", { name: `Revoke ${key.slice(0, 9)}…${key.slice(-4)}` }).click();
    await review(page, "revoke-confirm");
    await page.getByRole("button", { name: "Revoke key" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("is revoked");
    const refused = await lookup(`/github.com?token=${key}`);
    expect(refused.status).toBe(401);
    expect(await refused.text()).toBe("Missing or invalid token");
  });

  it("connects an MCP client through the consent page, lists it, and disconnects it", async () => {
    const registered = await fetch(new URL("/oauth/register", worker.base), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        client_name: "Browser Test Agent",
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      }),
    });
    const { client_id: clientId } = (await registered.json()) as { client_id: string };
    const verifier = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
    const challenge = Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))).toString("base64url");
    const resource = new URL("/mcp", worker.base).href;
    await page.goto(
      `/authorize?${new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: REDIRECT_URI, scope: "logos offline_access", state: "browser", code_challenge: challenge, code_challenge_method: "S256", resource })}`,
    );
    await expect
      .poll(() => page.getByRole("heading", { level: 1 }).textContent())
      .toBe("Allow Browser Test Agent to use your logo account?");
    // The browser is sent to the client's own redirect endpoint (a local program, absent here).
    const callback = await sentAway(page, REDIRECT_URI, () => page.getByRole("button", { name: "Approve" }).click());
    expect(callback.searchParams.get("state")).toBe("browser");
    const tokens = (await (
      await fetch(new URL("/oauth/token", worker.base), {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code: callback.searchParams.get("code")!,
          redirect_uri: REDIRECT_URI,
          client_id: clientId,
          code_verifier: verifier,
          resource,
        }),
      })
    ).json()) as { access_token: string; refresh_token: string };
    expect((await mcpInitialize(tokens.access_token)).status).toBe(200);

    await page.goto("/portal/connections");
    const row = page.locator("tbody tr", { hasText: "Browser Test Agent" });
    expect(await row.locator("td").nth(1).textContent()).toBe("127.0.0.1:33418");
    expect(await row.locator("td").nth(2).textContent()).toContain("Search for company logos");
    await review(page, "connections");
    await row.getByRole("button", { name: "Disconnect Browser Test Agent" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("Disconnected");
    expect(await page.locator("tbody tr", { hasText: "Browser Test Agent" }).count()).toBe(0);

    const after = await mcpInitialize(tokens.access_token);
    expect(after.status).toBe(401);
    expect(await after.json()).toMatchObject({ error: "Invalid or expired token" });
    const refresh = await fetch(new URL("/oauth/token", worker.base), {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: clientId }),
    });
    expect(refresh.status).toBe(400);
    expect(await refresh.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("upgrades through Stripe Checkout and shows the status on return", async () => {
    await page.goto("/portal/billing");
    // Stripe's hosted pages are out of reach here: where the browser is sent is what counts.
    const checkout = await sentAway(page, "https://checkout.stripe.com/", () =>
      page.getByRole("button", { name: "Upgrade to Launch" }).click(),
    );
    expect(checkout.href).toMatch(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_\w+$/);
    const sessionId = checkout.pathname.split("/").pop()!;

    // The customer pays; Stripe sends them back and tells the service by webhook.
    const paid = (await (await fetch(`${worker.stripe}/_complete/${sessionId}`, { method: "POST" })).json()) as Record<string, unknown>;
    const sent = (await (await fetch(`${worker.stripe}/_sessions/${sessionId}`)).json()) as Record<string, string>;
    expect(sent.success_url).toBe(`${worker.base}/portal/billing?checkout=success&session_id={CHECKOUT_SESSION_ID}`);
    await page.goto(sent.success_url!.replace("{CHECKOUT_SESSION_ID}", sessionId));
    await expect.poll(() => page.getByRole("status").textContent()).toContain("Payment received");
    expect((await deliverWebhook("checkout.session.completed", paid)).status).toBe(200);
    await page.reload();
    await expect.poll(() => page.getByRole("status").textContent()).toBe("Payment received: you are on the Launch plan.");
    await review(page, "billing");

    const portal = await sentAway(page, "https://billing.stripe.com/", () => page.getByRole("button", { name: "Manage billing" }).click());
    expect(portal.href).toMatch(/^https:\/\/billing\.stripe\.com\/p\/session\/test_\w+$/);
  });

  it("shows the error for a wrong password, signing in by keyboard alone", async () => {
    const other = await context.browser()!.newContext({ baseURL: worker.base, colorScheme: "light" });
    other.setDefaultTimeout(8_000);
    const p = await other.newPage();
    watch(p);
    try {
      await p.goto("/portal/login");
      // From the top of the page: skip link, brand, the header's links, then the form.
      await p.getByRole("textbox", { name: "Email" }).focus();
      await p.keyboard.type(EMAIL);
      await p.keyboard.press("Tab");
      expect(await p.evaluate("document.activeElement.id")).toBe("password");
      await p.keyboard.type("not the password");
      await p.keyboard.press("Enter");
      await expect.poll(() => p.getByRole("alert").textContent()).toBe("Invalid email or password");
      expect(await p.getByRole("textbox", { name: "Email" }).inputValue()).toBe(EMAIL);
      await review(p, "login");
      await p.getByLabel("Password").fill(PASSWORD);
      await p.getByRole("button", { name: "Sign in" }).click();
      await p.waitForURL("**/portal");
      await expect.poll(() => p.getByRole("heading", { level: 1 }).textContent()).toBe("Dashboard");
    } finally {
      await other.close();
    }
  });

  it("met no refusal of the Content Security Policy and no script error on the way", () => {
    expect(refusals).toEqual([]);
  });
});

async function cookieHeader(): Promise<string> {
  return (await context.cookies(worker.base)).map((c) => `${c.name}=${c.value}`).join("; ");
}

function mcpInitialize(token: string) {
  return fetch(new URL("/mcp", worker.base), {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "browser-test", version: "1" } },
    }),
  });
}

async function deliverWebhook(type: string, object: Record<string, unknown>) {
  const payload = JSON.stringify({
    id: `evt_browser_${Date.now()}`,
    object: "event",
    api_version: "2026-10-28.clover",
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  });
  const signature = await Stripe.webhooks.generateTestHeaderStringAsync({
    payload,
    secret: STRIPE_WEBHOOK_SECRET,
    cryptoProvider: Stripe.createSubtleCryptoProvider(),
  });
  return fetch(new URL("/apiaas/billing/webhook", worker.base), {
    method: "POST",
    headers: { "Content-Type": "application/json", "Stripe-Signature": signature },
    body: payload,
  });
}
