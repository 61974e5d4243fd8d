import { env, exports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { accounts, sessions } from "../../schema";
import { setPassword } from "../../src/accounts/accounts";
import { knownDevice } from "../../src/accounts/devices";
import { signIn } from "../../src/accounts/signIn";
import { openSession } from "../../src/accounts/browserSessions";
import { db } from "../helpers/catalogue";
import { approveAs, authorizeUrl, pkcePair, registerClient } from "../oauth/helpers";
import { fetchWith, freshCompany } from "../lookup/helpers";
import { BASE, Browser, createdKeyOf, freshEmail, PASSWORD, signedUp, textOf } from "./helpers";

const PAGES = ["/portal", "/portal/keys", "/portal/usage", "/portal/billing", "/portal/connections", "/portal/password"];

describe("every page", () => {
  it("forbids framing and anything inline, and keeps signed-in pages out of caches", async () => {
    const { browser } = await signedUp();
    const visits: Array<[string, () => Promise<Response>]> = [
      ...PAGES.map((path): [string, () => Promise<Response>] => [path, () => browser.fetch(path)]),
      ["/portal/login", () => new Browser().fetch("/portal/login")],
      ["/portal/signup", () => new Browser().fetch("/portal/signup")],
      ["/", () => exports.default.fetch(`${BASE}/`, { headers: { Accept: "text/html" } })],
    ];
    for (const [path, visit] of visits) {
      const page = await visit();
      expect(page.status, path).toBe(200);
      const csp = page.headers.get("content-security-policy")!;
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).toContain("default-src 'none'");
      expect(csp, path).toMatch(/script-src 'self';/);
      expect(csp, path).not.toContain("unsafe");
      expect(page.headers.get("x-frame-options"), path).toBe("DENY");
      expect(page.headers.get("cache-control"), path).toBe("no-store");
      const html = await page.text();
      expect(html.startsWith("<!doctype html>"), path).toBe(true);
      // No inline script or style for the policy to have to allow.
      expect(html, path).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
      expect(html, path).not.toMatch(/\sstyle=|<style/);
      expect(html, path).not.toMatch(/\son[a-z]+=/);
    }
  });

  it("serves its stylesheet and script as files, cacheable, never sniffed", async () => {
    const html = await (await new Browser().fetch("/portal/login")).text();
    for (const path of [
      /href="(\/portal\/assets\/portal\.\w+\.css)"/.exec(html)![1]!,
      /src="(\/portal\/assets\/portal\.\w+\.js)"/.exec(html)![1]!,
    ]) {
      const file = await exports.default.fetch(`${BASE}${path}`);
      expect(file.status).toBe(200);
      expect(file.headers.get("cache-control")).toContain("immutable");
      expect(file.headers.get("x-content-type-options")).toBe("nosniff");
    }
  });
});

describe("the playground", () => {
  it("gives an embed snippet that stays an image whatever the company's name", async () => {
    const { domain } = await freshCompany({ name: `Evil" onerror="alert(1)` });
    const page = await exports.default.fetch(`${BASE}/?domain=${domain}`, { headers: { Accept: "text/html" } });
    expect(page.status).toBe(200);
    const snippet = /<pre id="snippet">([\s\S]*?)<\/pre>/.exec(await page.text())![1]!;
    // What a person copies: the text of the code block, its markup decoded once.
    const entities: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" };
    const copied = snippet.replace(/<[^>]+>/g, "").replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => entities[name]!);
    expect(copied).toContain(`alt="Evil&quot; onerror=&quot;alert(1) logo"`);
    expect(copied).not.toContain(`onerror="`);
  });

  it("may show images from the service's public name when the page is opened under another", async () => {
    const { domain } = await freshCompany();
    const page = await fetchWith(
      { PUBLIC_BASE_URL: "https://logos.example.com" },
      `https://logo-lookup.example.workers.dev/?domain=${domain}`,
      {
        headers: { Accept: "text/html" },
      },
    );
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('src="https://logos.example.com/assets/');
    expect(page.headers.get("content-security-policy")).toContain("img-src 'self' https://logos.example.com;");
  });
});

describe("forms posted from another site", () => {
  it("change nothing: no account, no sign-in, no key, no revocation, no disconnection, no checkout", async () => {
    const { browser } = await signedUp();
    const email = freshEmail();
    const attempts: Array<[string, Record<string, string>]> = [
      ["/portal/signup", { email, password: PASSWORD }],
      ["/portal/login", { email, password: PASSWORD }],
      ["/portal/keys", { type: "publishable" }],
      ["/portal/billing/checkout", { plan: "launch" }],
      ["/portal/billing/manage", {}],
      ["/portal/logout", {}],
    ];
    for (const [path, fields] of attempts) {
      const foreign: Record<string, string>[] = [{ Origin: "https://evil.example" }, { Origin: "null", "Sec-Fetch-Site": "cross-site" }];
      for (const headers of foreign) {
        const response = await browser.postForm(path, fields, headers);
        expect(response.status, path).toBe(403);
        expect(response.headers.get("set-cookie"), path).toBeNull();
      }
    }
    expect(await textOf(await browser.fetch("/portal/keys"))).toContain("No keys yet");
    expect((await new Browser().postForm("/portal/login", { email, password: PASSWORD })).status).toBe(401);
  });
});

describe("accounts see only their own", () => {
  it("keys, which another account can neither revoke nor use in its playground", async () => {
    const owner = await signedUp();
    const html = await (await owner.browser.postForm("/portal/keys", { type: "publishable" })).text();
    const key = createdKeyOf(html)!;
    const id = /href="\/portal\/keys\/([\w-]+)\/revoke"/.exec(html)![1]!;
    const other = await signedUp();
    expect(await (await other.browser.fetch("/portal/keys")).text()).not.toContain(key.slice(0, 9));
    expect((await other.browser.fetch(`/portal/keys/${id}/revoke`)).status).toBe(404);
    expect((await other.browser.postForm(`/portal/keys/${id}/revoke`, {})).status).toBe(404);
    const { domain } = await freshCompany();
    expect((await other.browser.fetch(`/portal/playground/logo?key=${id}&domain=${domain}&size=64&theme=light`)).status).toBe(404);
    expect((await other.browser.fetch(`/portal?domain=${domain}&key=${id}`)).status).toBe(200);
    expect(await textOf(await other.browser.fetch(`/portal?domain=${domain}&key=${id}`))).not.toContain(key.slice(0, 9));
    // Still live for its owner.
    expect((await exports.default.fetch(`${BASE}/${domain}?token=${key}`, { redirect: "manual" })).status).toBe(302);
  });

  it("connections, which another account cannot disconnect", async () => {
    const owner = await signedUp();
    const clientId = await registerClient(undefined, "Owner's Agent");
    const { challenge } = await pkcePair();
    await approveAs(new Browser(), authorizeUrl(clientId, challenge), owner.email);
    const listed = await (await owner.browser.fetch("/portal/connections")).text();
    const action = /action="(\/portal\/connections\/[^"]+\/disconnect)"/.exec(listed)![1]!;
    const other = await signedUp();
    expect(await textOf(await other.browser.fetch("/portal/connections"))).not.toContain("Owner's Agent");
    expect((await other.browser.postForm(action, {})).status).toBe(404);
    expect(await textOf(await owner.browser.fetch("/portal/connections"))).toContain("Owner's Agent");
  });
});

describe("sign-in", () => {
  it("follows `next` only to a page of the portal", async () => {
    const { email } = await signedUp();
    for (const next of ["https://evil.example/portal", "//evil.example/portal", "/\\evil.example", "/lookup", "javascript:alert(1)"]) {
      const response = await new Browser().postForm("/portal/login", { email, password: PASSWORD, next });
      expect(response.status, next).toBe(303);
      expect(response.headers.get("location"), next).toBe("/portal");
    }
  });

  it("replaces the session id the browser brought (no fixation)", async () => {
    const { browser, email } = await signedUp();
    const before = browser.cookies.get("__Host-session");
    await browser.postForm("/portal/login", { email, password: PASSWORD });
    expect(browser.cookies.get("__Host-session")).not.toBe(before);
    const stale = new Browser();
    stale.cookies.set("__Host-session", before!);
    expect((await stale.fetch("/portal")).status).toBe(303);
  });

  it("starts no session for a password changed after it was checked", async () => {
    const { email } = await signedUp();
    const checked = await signIn(env, db, { email, password: PASSWORD }, { address: "203.0.113.40", device: undefined });
    if (!checked.ok) throw new Error(checked.error.message);
    // The owner changes the password between the check and the session's write.
    expect((await setPassword(db, checked.value.id, "a brand new passphrase")).ok).toBe(true);
    expect(await openSession(db, checked.value.id, new Date(), checked.value.checked.passwordHash)).toBeNull();
    expect(await db.$count(sessions, eq(sessions.accountId, checked.value.id))).toBe(0);
    const current = await db.query.accounts.findFirst({ where: eq(accounts.id, checked.value.id) });
    expect(await openSession(db, checked.value.id, new Date(), current!.passwordHash)).not.toBeNull();
  });

  it("leaves no browser signed in with the old password once it is changed, however the sign-ins interleave", async () => {
    for (let round = 0; round < 3; round++) {
      const { browser, email } = await signedUp();
      const others = Array.from({ length: 8 }, () => new Browser());
      const [changed] = await Promise.all([
        browser.postForm("/portal/password", { current: PASSWORD, password: "a brand new passphrase" }),
        ...others.map(async (other, i) => {
          await scheduler.wait(i * 3);
          return other.postForm("/portal/login", { email, password: PASSWORD }, { "CF-Connecting-IP": `198.51.100.${round * 10 + i}` });
        }),
      ]);
      expect(changed.status).toBe(303);
      expect((await browser.fetch("/portal")).status).toBe(200);
      for (const other of others) {
        expect((await other.fetch("/portal")).status).toBe(303);
        // Nor does a device cookie it was given count under the new password.
        const device = other.cookies.get("__Host-device");
        if (device)
          expect(
            await knownDevice(env.SIGNED_URL_SECRET, (await db.query.accounts.findFirst({ where: eq(accounts.email, email) }))!, device),
          ).toBeNull();
      }
    }
  });
});

describe("the landing page", () => {
  it("is only for browsers asking for HTML: other clients of / get what they always got, and lookups are untouched", async () => {
    const plain = await exports.default.fetch(`${BASE}/`);
    expect(plain.status).toBe(401);
    expect(await plain.text()).toBe("Missing or invalid token");
    const json = await exports.default.fetch(`${BASE}/`, { headers: { Accept: "application/json" } });
    expect(json.status).toBe(401);
    const { domain } = await freshCompany();
    const lookup = await exports.default.fetch(`${BASE}/${domain}`, { headers: { Accept: "text/html" } });
    expect(lookup.status).toBe(401);
    expect(await lookup.text()).toBe("Missing or invalid token");
  });
});
