import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SIGN_IN_LIMITS } from "../../src/accounts/signIn";
import { MAX_LISTED_KEYS } from "../../src/keys/apiKeys";
import { limiterNames } from "../../src/limits/rateLimiterClient";
import { deliver, event, subscription } from "../billing/helpers";
import { fetchWith, freshCompany } from "../lookup/helpers";
import { spendSignIns } from "../oauth/helpers";
import { BASE, Browser, createdKeyOf, freshEmail, insertedKeys, PASSWORD, signedUp, textOf } from "./helpers";
import { freezeClock } from "../helpers/clock";

const accountIdOf = async (browser: Browser) =>
  ((await (await browser.fetch("/apiaas/whoami")).json()) as { account: { id: string } }).account.id;

const form = (fields: Record<string, string>) => ({
  method: "POST",
  body: new URLSearchParams(fields).toString(),
  headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: BASE },
});

/** The `<input>` of a field, as rendered. */
const inputOf = (html: string, name: string) => new RegExp(`<input id="${name}"[^>]*>`).exec(html)?.[0] ?? "";

/** Whether assistive technology hears the field as wrong, and the form's error read with it. */
const tiedToError = (html: string, name: string) => {
  const input = inputOf(html, name);
  return input.includes('aria-invalid="true"') && /aria-describedby="[^"]*\bform-error\b/.test(input);
};

describe("sign-up refuses", () => {
  it("a short password and a malformed email, saying which field is wrong", async () => {
    const browser = new Browser();
    const short = await browser.postForm("/portal/signup", { email: freshEmail(), password: "too-short" });
    expect(short.status).toBe(400);
    const shortPage = await short.text();
    expect(shortPage).toContain("The password must be at least 10 characters.");
    expect(shortPage).toContain('aria-invalid="true"');
    const malformed = await browser.postForm("/portal/signup", { email: "not-an-email", password: PASSWORD });
    expect(malformed.status).toBe(400);
    expect(await textOf(malformed)).toContain("Enter an email address, like name@example.com.");
    expect(browser.cookies.has("__Host-session")).toBe(false);
  });

  it("a common or repetitive password, saying why", async () => {
    const browser = new Browser();
    const common = await browser.postForm("/portal/signup", { email: freshEmail(), password: "password123" });
    expect(common.status).toBe(400);
    expect(await common.text()).toContain("The password is one of the most commonly used passwords");
    const repeated = await browser.postForm("/portal/signup", { email: freshEmail(), password: "aaaaaaaaaa" });
    expect(repeated.status).toBe(400);
    expect(await repeated.text()).toContain("The password repeats the same characters");
    expect(browser.cookies.has("__Host-session")).toBe(false);
  });

  it("an email that already has an account", async () => {
    const { email } = await signedUp();
    const again = await new Browser().postForm("/portal/signup", { email: email.toUpperCase(), password: PASSWORD });
    expect(again.status).toBe(409);
    expect(await textOf(again)).toContain("An account with this email already exists. Sign in instead.");
  });

  it("the same email posted several times at once: one account, the other posts told it exists", async () => {
    const email = freshEmail();
    const posts = await Promise.all(
      Array.from({ length: 8 }, () => new Browser().postForm("/portal/signup", { email, password: PASSWORD })),
    );
    expect(posts.map((response) => response.status).sort()).toEqual([303, 409, 409, 409, 409, 409, 409, 409]);
    for (const refused of posts.filter((response) => response.status === 409)) {
      expect(await textOf(refused)).toContain("An account with this email already exists. Sign in instead.");
    }
  });

  it("everyone when SIGNUP is off", async () => {
    const page = await fetchWith({ SIGNUP: "off" }, `${BASE}/portal/signup`);
    expect(page.status).toBe(403);
    expect(await textOf(page)).toContain("Sign-up is closed");
    const email = freshEmail();
    const posted = await fetchWith({ SIGNUP: "off" }, `${BASE}/portal/signup`, form({ email, password: PASSWORD }));
    expect(posted.status).toBe(403);
    expect(posted.headers.get("set-cookie")).toBeNull();
    const login = await fetchWith({ SIGNUP: "off" }, `${BASE}/portal/login`);
    expect(await login.text()).not.toContain('href="/portal/signup"');
    // Nothing was created: signing up with sign-up open afterwards still works.
    expect((await new Browser().postForm("/portal/signup", { email, password: PASSWORD })).status).toBe(303);
  });

  it("more attempts than its address's sign-in limit allows", async () => {
    freezeClock();
    const email = freshEmail();
    const address = `198.51.100.${Math.floor(Math.random() * 200)}`;
    const headers = { "CF-Connecting-IP": address };
    // The minute's attempts spent at once: posted one by one they take seconds.
    await spendSignIns(limiterNames.signInAddress(address), SIGN_IN_LIMITS.perAddress, SIGN_IN_LIMITS.perAddress);
    const refused = await new Browser().postForm("/portal/signup", { email, password: PASSWORD }, headers);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});

describe("sign-in refuses", () => {
  it("a wrong password, keeping the email and saying so", async () => {
    const { email } = await signedUp();
    const browser = new Browser();
    const response = await browser.postForm("/portal/login", { email, password: "not the password" });
    expect(response.status).toBe(401);
    const html = await response.text();
    expect(html).toMatch(/<p class="alert" role="alert" id="form-error">Invalid email or password<\/p>/);
    expect(await textOf(new Response(html))).toContain("Invalid email or password");
    expect(html).toContain(`value="${email}"`);
    // Which of the two is wrong is never said: both fields are marked, read with the error.
    expect(tiedToError(html, "email")).toBe(true);
    expect(tiedToError(html, "password")).toBe(true);
    expect(browser.cookies.has("__Host-session")).toBe(false);
  });

  it("empty fields, and the eleventh attempt of a minute", async () => {
    freezeClock();
    const empty = await new Browser().postForm("/portal/login", {});
    expect(empty.status).toBe(400);
    const emptyPage = await empty.text();
    expect(await textOf(new Response(emptyPage))).toContain("Enter your email address and password.");
    expect(tiedToError(emptyPage, "email") && tiedToError(emptyPage, "password")).toBe(true);
    // Only the field that is wrong is marked.
    const noPassword = await (await new Browser().postForm("/portal/login", { email: freshEmail() })).text();
    expect([tiedToError(noPassword, "email"), tiedToError(noPassword, "password")]).toEqual([false, true]);
    const malformed = await (await new Browser().postForm("/portal/login", { email: "not-an-email", password: PASSWORD })).text();
    expect([tiedToError(malformed, "email"), tiedToError(malformed, "password")]).toEqual([true, false]);
    const email = freshEmail();
    await spendSignIns(limiterNames.signInAccount(email), SIGN_IN_LIMITS.perAccount, SIGN_IN_LIMITS.perAccount);
    const limited = await new Browser().postForm("/portal/login", { email, password: "wrong password!" });
    expect(limited.status).toBe(429);
    const limitedPage = await limited.text();
    expect(await textOf(new Response(limitedPage))).toContain("Too many sign-in attempts");
    // Waiting is the fix, not either field.
    expect(inputOf(limitedPage, "email")).not.toContain("aria-invalid");
  });
});

describe("keys refuse", () => {
  it("origins that are not origins, and origins or attribution on a secret key", async () => {
    const { browser } = await signedUp();
    const withPath = await browser.postForm("/portal/keys", { type: "publishable", origins: "https://example.com/shop" });
    expect(withPath.status).toBe(400);
    expect(await textOf(withPath)).toContain('"https://example.com/shop" must be an origin without a path');
    const secret = await browser.postForm("/portal/keys", { type: "secret", origins: "https://example.com" });
    expect(secret.status).toBe(400);
    expect(await textOf(secret)).toContain("apply to publishable keys only");
    const attribution = await browser.postForm("/portal/keys", { type: "secret", attribution: "required" });
    expect(attribution.status).toBe(400);
    // Announced at the top of the page, above the list of keys, and tied to the field it is about.
    const attributionPage = await attribution.text();
    expect(attributionPage).toContain("<title>Error: Keys · Logo Lookup</title>");
    expect(attributionPage.indexOf('role="alert"')).toBeGreaterThan(-1);
    expect(attributionPage.indexOf('role="alert"')).toBeLessThan(attributionPage.indexOf('id="keys-heading"'));
    const checkbox = /<input\s[^>]*name="attribution"[^>]*>/.exec(attributionPage)![0];
    expect([checkbox.includes('aria-invalid="true"'), checkbox.includes('aria-describedby="attribution-hint attribution-error"')]).toEqual([
      true,
      true,
    ]);
    expect(attributionPage).toContain('id="attribution-error">Attribution applies to publishable keys only');
    expect(/<textarea[^>]*id="origins"[^>]*>/.exec(attributionPage)![0]).not.toContain("aria-invalid");
    const type = await browser.postForm("/portal/keys", { type: "admin" });
    expect(type.status).toBe(400);
    expect(await textOf(type)).toContain("Choose publishable or secret.");
    expect(await textOf(await browser.fetch("/portal/keys"))).toContain("No keys yet");
  });

  it("a host no page has, and a field of origins longer than any list of them", async () => {
    const { browser } = await signedUp();
    const host = await browser.postForm("/portal/keys", { type: "publishable", origins: `https://${"a".repeat(5000)}.com` });
    expect(host.status).toBe(400);
    const hostPage = await textOf(host);
    expect(hostPage).toContain("has a host name too long: at most 253 characters, and 63 between dots");
    const long = await browser.postForm("/portal/keys", { type: "publishable", origins: "https://www.example.com\n".repeat(2000) });
    expect(long.status).toBe(400);
    expect(await textOf(long)).toContain("Too long: the allowed origins take at most 32 KB, one origin a line.");
    expect(await textOf(await browser.fetch("/portal/keys"))).toContain("No keys yet");
  });

  it(`a key past the ${MAX_LISTED_KEYS} live keys an account may hold, saying how to make room`, async () => {
    const { browser } = await signedUp();
    const ids = await insertedKeys(await accountIdOf(browser), MAX_LISTED_KEYS);
    const refused = await browser.postForm("/portal/keys", { type: "secret" });
    expect(refused.status).toBe(409);
    const html = await refused.text();
    expect(html).toMatch(
      /<p class="alert" role="alert" id="form-error">This account has 100 live keys, the most it may hold: revoke one it no longer uses, then create the new one. <a href="#create-heading">Go to the form<\/a><\/p>/,
    );
    expect(createdKeyOf(html)).toBeUndefined();
    expect((await browser.postForm(`/portal/keys/${ids[0]}/revoke`, {})).status).toBe(303);
    expect((await browser.postForm("/portal/keys", { type: "secret" })).status).toBe(201);
  });

  it("to revoke a key that does not exist or is already revoked", async () => {
    const { browser } = await signedUp();
    expect((await browser.fetch(`/portal/keys/${crypto.randomUUID()}/revoke`)).status).toBe(404);
    expect((await browser.postForm(`/portal/keys/${crypto.randomUUID()}/revoke`, {})).status).toBe(404);
    const html = await (await browser.postForm("/portal/keys", { type: "publishable" })).text();
    expect(createdKeyOf(html)).toBeDefined();
    const id = /href="\/portal\/keys\/([\w-]+)\/revoke"/.exec(html)![1]!;
    expect((await browser.postForm(`/portal/keys/${id}/revoke`, {})).status).toBe(303);
    const again = await browser.fetch(`/portal/keys/${id}/revoke`);
    expect(again.status).toBe(404);
    expect(await textOf(again)).toContain("This key is revoked already.");
  });
});

describe("portal forms refuse", () => {
  it("a body larger than any form, before reading it, with or without a session", async () => {
    const { browser } = await signedUp();
    const huge = "x".repeat(100 * 1024);
    for (const response of [
      await browser.postForm("/portal/keys", { type: "publishable", origins: huge }),
      await new Browser().postForm("/portal/login", { email: huge, password: PASSWORD }),
    ]) {
      expect(response.status).toBe(413);
      expect(await textOf(response)).toContain("This form is too large");
    }
    expect(await textOf(await browser.fetch("/portal/keys"))).toContain("No keys yet");
  });
});

describe("the playground refuses", () => {
  it("a domain that is no domain, one without a logo, and images with a bad key or query", async () => {
    const { browser } = await signedUp();
    expect(await textOf(await browser.fetch("/portal?domain=not%20a%20domain"))).toContain("is not a domain name");
    expect(await textOf(await browser.fetch("/portal?domain=nothing-here-at-all.com"))).toContain(
      "No logo for nothing-here-at-all.com yet.",
    );
    const { domain } = await freshCompany();
    expect((await browser.fetch(`/portal/playground/logo?key=${crypto.randomUUID()}&domain=${domain}&size=64&theme=light`)).status).toBe(
      404,
    );
    expect((await browser.fetch(`/portal/playground/logo?domain=${domain}&size=64&theme=light`)).status).toBe(400);
    expect((await browser.fetch(`/portal/playground/logo?key=x&domain=${domain}&size=9000&theme=light`)).status).toBe(400);
  });

  it("visitors past their tries of the minute, saying when to come back", async () => {
    const headers = { Accept: "text/html", "CF-Connecting-IP": `203.0.113.${Math.floor(Math.random() * 200)}` };
    let last: Response | undefined;
    freezeClock();
    for (let i = 0; i <= 30; i++) last = await exports.default.fetch(`${BASE}/?domain=example.com`, { headers });
    expect(last!.status).toBe(429);
    expect(Number(last!.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(Number(last!.headers.get("Retry-After"))).toBeLessThanOrEqual(60);
    expect(await textOf(last!)).toContain("That is 30 domains this minute");
  });

  it("a visitor who takes another IPv6 address of the same /64, but not a neighbour on another /64", async () => {
    const network = `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}:7`;
    const tryFrom = (address: string) =>
      exports.default.fetch(`${BASE}/?domain=example.com`, { headers: { Accept: "text/html", "CF-Connecting-IP": address } });
    freezeClock();
    for (let i = 1; i <= 30; i++) expect((await tryFrom(`${network}::${i.toString(16)}`)).status).toBe(200);
    expect((await tryFrom(`${network}:0:0:0:ffff`)).status).toBe(429);
    expect((await tryFrom(`${network.replace(/:7$/, ":0007")}:abcd::1`)).status).toBe(429);
    expect((await tryFrom(`${network.replace(/:7$/, ":8")}::1`)).status).toBe(200);
  });

  it("a signed-in account past its tries of the minute, with a key or without", async () => {
    freezeClock();
    const { browser } = await signedUp();
    let last: Response | undefined;
    for (let i = 0; i <= 60; i++) last = await browser.fetch("/portal?domain=example.com");
    expect(last!.status).toBe(429);
    expect(Number(last!.headers.get("Retry-After"))).toBeGreaterThan(0);
    const text = await textOf(last!);
    expect(text).toContain("That is 60 domains this minute. Wait a minute.");
    expect(text).not.toContain("/assets/");
  });
});

describe("billing refuses", () => {
  it("a plan that is not sold by checkout, an unknown plan, and Manage billing without a customer", async () => {
    const { browser } = await signedUp();
    const enterprise = await browser.postForm("/portal/billing/checkout", { plan: "enterprise" });
    expect(enterprise.status).toBe(400);
    expect(await textOf(enterprise)).toContain("The enterprise plan is not sold through checkout here; contact us");
    expect((await browser.postForm("/portal/billing/checkout", { plan: "free" })).status).toBe(400);
    const manage = await browser.postForm("/portal/billing/manage", {});
    expect(manage.status).toBe(404);
    expect(await textOf(manage)).toContain("upgrade to a paid plan first");
  });

  it("a second checkout for an account that pays for a subscription, pointing to Manage billing", async () => {
    const { browser } = await signedUp();
    const { account } = (await (await browser.fetch("/apiaas/whoami")).json()) as { account: { id: string } };
    await deliver(event("customer.subscription.created", subscription(account.id)));
    const response = await browser.postForm("/portal/billing/checkout", { plan: "growth" });
    expect(response.status).toBe(409);
    expect(await textOf(response)).toContain("This account already has a subscription: change its plan with Manage billing");
  });

  it("says so when Stripe refuses the call", async () => {
    const { browser } = await signedUp();
    const response = await fetchWith({ STRIPE_SECRET_KEY: "sk_test_revoked" }, `${BASE}/portal/billing/checkout`, {
      ...form({ plan: "launch" }),
      headers: { ...form({}).headers, Cookie: `__Host-session=${browser.cookies.get("__Host-session")}` },
    });
    // A revoked key is the deployment's fault, which no retry mends.
    expect(response.status).toBe(500);
    expect(await textOf(response)).toContain("Billing is not set up correctly on this service");
  });

  it("reports a return with someone else's or a malformed checkout as not this account's", async () => {
    const { browser } = await signedUp();
    for (const id of ["cs_test_unknown", "not-a-session"]) {
      expect(await textOf(await browser.fetch(`/portal/billing?checkout=success&session_id=${id}`))).toContain(
        "That checkout was not started from this account.",
      );
    }
  });
});

describe("connections refuse", () => {
  it("to disconnect a grant the account does not have", async () => {
    const { browser } = await signedUp();
    const response = await browser.postForm("/portal/connections/no-such-grant/disconnect", {});
    expect(response.status).toBe(404);
    expect(await textOf(response)).toContain("That connection no longer exists.");
  });
});

describe("a form body that cannot be read", () => {
  it("is answered as a form with empty fields, never a 500", async () => {
    const { browser } = await signedUp();
    const broken = [
      { "Content-Type": "multipart/form-data" },
      { "Content-Type": "multipart/form-data; boundary=x", body: '--x\r\nContent-Disposition: form-data; name="email"\r\n\r\ncut off' },
    ];
    for (const { body, ...headers } of broken) {
      for (const [who, path] of [
        [new Browser(), "/portal/login"],
        [new Browser(), "/portal/signup"],
        [browser, "/portal/keys"],
        [browser, "/portal/billing/checkout"],
      ] as const) {
        const response = await who.fetch(path, { method: "POST", headers, body: body ?? "" });
        expect(response.status, `${path} ${headers["Content-Type"]}`).toBe(400);
      }
    }
  });
});

it("answers an unknown page of the portal with a page, not a lookup", async () => {
  const { browser } = await signedUp();
  const response = await browser.fetch("/portal/nothing-here");
  expect(response.status).toBe(404);
  expect(response.headers.get("content-type")).toContain("text/html");
});

describe("paths the portal has no page for", () => {
  it("a page's path with a trailing slash goes to the page; a missing page keeps a signed-in visitor's navigation", async () => {
    const { browser, email } = await signedUp();
    for (const [path, page] of [
      ["/portal/", "/portal"],
      ["/portal/keys/?created=1", "/portal/keys?created=1"],
      ["/portal/usage//", "/portal/usage"],
    ]) {
      const response = await browser.fetch(path!);
      expect(response.status).toBe(301);
      expect(response.headers.get("location")).toBe(page);
    }
    const missing = await browser.fetch("/portal/nowhere");
    expect(missing.status).toBe(404);
    const html = await missing.text();
    expect(html).toContain("No such page");
    expect(html).toContain('aria-label="Portal"');
    expect(html).toContain(email);

    const visitor = await new Browser().fetch("/portal/nowhere");
    expect(visitor.status).toBe(404);
    expect(await visitor.text()).not.toContain('aria-label="Portal"');
  });
});
