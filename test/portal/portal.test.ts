import { inArray } from "drizzle-orm";
import { env, exports } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { sessions } from "../../schema";
import { setPassword } from "../../src/accounts/accounts";
import { SIGN_IN_LIMITS } from "../../src/accounts/signIn";
import { limiterNames, rateLimiterFor } from "../../src/limits/rateLimiterClient";
import { db, insertAccount } from "../helpers/catalogue";
import { freezeClock } from "../helpers/clock";
import { spendSignIns } from "../oauth/helpers";
import { errorBody } from "../helpers/errors";

const PASSWORD = "correct horse battery";
let n = 0;
async function account() {
  const email = `portal${++n}-${crypto.randomUUID().slice(0, 6)}@example.com`;
  return insertAccount({ email, password: PASSWORD, plan: "launch" });
}

const post = (path: string, body: BodyInit, headers: Record<string, string>, base = "https://logos.test") =>
  exports.default.fetch(`${base}${path}`, { method: "POST", body, headers });
const loginJson = (email: string, password: string, path = "/apiaas/login", extra: Record<string, string> = {}) =>
  post(path, JSON.stringify({ email, password }), { "Content-Type": "application/json", ...extra });
const cookieOf = (response: Response) => /__Host-session=([^;]*)/.exec(response.headers.get("set-cookie") ?? "")?.[1];
const whoami = (cookie?: string, path = "/apiaas/whoami") =>
  exports.default.fetch(`https://logos.test${path}`, cookie ? { headers: { Cookie: `__Host-session=${cookie}` } } : {});

describe("portal sign-in", () => {
  it.each(["/apiaas/login", "/api/v1/auth/login", "/api/v1/login"])(
    "%s signs in with JSON and sets a safe session cookie",
    async (path) => {
      const { email, id } = await account();
      const response = await loginJson(email.toUpperCase(), PASSWORD, path);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ account: { id, email, plan: "launch" } });
      const cookie = response.headers.get("set-cookie")!;
      expect(cookie).toMatch(/^__Host-session=[A-Za-z0-9_-]{43};/);
      expect(cookie).toContain("HttpOnly");
      expect(cookie).toContain("SameSite=Lax");
      expect(cookie).toContain("Secure");
      expect(cookie).toContain("Path=/");
      expect(response.headers.get("cache-control")).toBe("no-store");
    },
  );

  it("refuses a body larger than any sign-in, as JSON, before reading it", async () => {
    const response = await loginJson(`${"x".repeat(100 * 1024)}@example.com`, PASSWORD);
    expect(response.status).toBe(413);
    expect(await errorBody(response)).toEqual({ error: "Payload too large", code: "payload_too_large" });
    expect(response.headers.get("set-cookie")).toBeNull();
  });

  it("accepts a form body, and leaves Secure off on localhost", async () => {
    const { email } = await account();
    const response = await post(
      "/api/v1/login",
      new URLSearchParams({ email, password: PASSWORD }).toString(),
      {
        "Content-Type": "application/x-www-form-urlencoded",
        Origin: "http://localhost:8787",
      },
      "http://localhost:8787",
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("set-cookie")).not.toContain("Secure");
  });

  it("refuses a form posted from another site (login CSRF)", async () => {
    const { email } = await account();
    const form = new URLSearchParams({ email, password: PASSWORD }).toString();
    const attempts: Record<string, string>[] = [{ Origin: "https://evil.example" }, { "Sec-Fetch-Site": "cross-site" }, {}];
    for (const headers of attempts) {
      const response = await post("/apiaas/login", form, { "Content-Type": "application/x-www-form-urlencoded", ...headers });
      expect(response.status).toBe(403);
      expect(response.headers.get("set-cookie")).toBeNull();
    }
  });

  it("refuses a wrong password and an unknown email alike", async () => {
    const { email } = await account();
    for (const response of [await loginJson(email, "wrong password!"), await loginJson("nobody@example.com", PASSWORD)]) {
      expect(response.status).toBe(401);
      expect(await errorBody(response)).toEqual({ error: "Invalid email or password", code: "unauthorized" });
      expect(response.headers.get("set-cookie")).toBeNull();
    }
  });

  it.each([
    ["not json", { "Content-Type": "application/json" }],
    [JSON.stringify({ email: "x@example.com" }), { "Content-Type": "application/json" }],
    [JSON.stringify({ email: "not-an-email", password: "x" }), { "Content-Type": "application/json" }],
    ["email=x@example.com&password=y", { "Content-Type": "text/plain", Origin: "https://logos.test" }],
  ])("answers a bad body %j with a clear 400", async (body, headers) => {
    const response = await post("/apiaas/login", body, headers);
    expect(response.status).toBe(400);
    const json = (await response.json()) as { error: string; code: string };
    expect(json.code).toBe("invalid_argument");
    expect(json.error.length).toBeGreaterThan(5);
  });

  it("limits sign-in attempts per account", async () => {
    freezeClock();
    const { email } = await account();
    // All but one attempt of the minute spent at once.
    await spendSignIns(
      limiterNames.signInAccountAtAddress(email, "unknown"),
      SIGN_IN_LIMITS.perAccountAndAddress,
      SIGN_IN_LIMITS.perAccountAndAddress - 1,
    );
    expect((await loginJson(email, "wrong password!")).status).toBe(401);
    const refused = await loginJson(email, PASSWORD);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });
});

describe("sign-in limits under attack", () => {
  // Every attempt of a test falls in one minute, and one day.
  beforeEach(() => {
    freezeClock();
  });
  const from = (address: string) => ({ "CF-Connecting-IP": address });
  const signInWindow = (limit: number) => [{ name: "sign-in", period: "minute" as const, limit }];
  const attemptsFor = async (email: string) =>
    (await rateLimiterFor(env, limiterNames.signInAccount(email)).usage(signInWindow(1)))[0]!.used;

  it("row 12: once an address is refused, its guesses at other emails touch nothing of theirs", async () => {
    const address = `198.51.100.${Math.floor(Math.random() * 250)}`;
    await spendSignIns(limiterNames.signInAddress(address), SIGN_IN_LIMITS.perAddress, SIGN_IN_LIMITS.perAddress);
    const victims = ["victim-a@example.com", "victim-b@example.com"].map((e) => `${address}-${e}`);
    for (const email of victims) expect((await loginJson(email, "wrong password!", "/apiaas/login", from(address))).status).toBe(429);
    for (const email of victims) expect(await attemptsFor(email)).toBe(0);
  });

  it("guesses spread over many addresses lock out no browser the owner signed in from before", async () => {
    const { email } = await account();
    const signedIn = await loginJson(email, PASSWORD, "/apiaas/login", from("192.0.2.20"));
    const device = /__Host-device=([^;]*)/.exec(signedIn.headers.get("set-cookie") ?? "")?.[1];
    expect(device).toMatch(/^[\w-]{22}\.[\w-]{43}$/);
    // Every address the attacker has fills the account's ceiling from everywhere (the owner's sign-in took one).
    await spendSignIns(limiterNames.signInAccount(email), SIGN_IN_LIMITS.perAccount, SIGN_IN_LIMITS.perAccount - 1);
    expect((await loginJson(email, PASSWORD, "/apiaas/login", from("192.0.2.21"))).status).toBe(429);
    // The owner's browser, from yet another address, still signs in.
    expect((await loginJson(email, PASSWORD, "/apiaas/login", { ...from("192.0.2.22"), Cookie: `__Host-device=${device}` })).status).toBe(
      200,
    );
    // Another account's token, or one altered, counts for nothing. The signature is altered in its
    // first character: its last carries two bits that base64url decoding drops (A to D are the
    // same bytes there), so altering that one failed this test one run in sixteen.
    const other = await account();
    const otherDevice = /__Host-device=([^;]*)/.exec((await loginJson(other.email, PASSWORD)).headers.get("set-cookie") ?? "")?.[1];
    const [id, signature] = device!.split(".") as [string, string];
    for (const forged of [otherDevice, `${id}.${signature.startsWith("A") ? "B" : "A"}${signature.slice(1)}`]) {
      expect((await loginJson(email, PASSWORD, "/apiaas/login", { ...from("192.0.2.23"), Cookie: `__Host-device=${forged}` })).status).toBe(
        429,
      );
    }
  });

  it("a new password ends every device token made under the old one", async () => {
    const { id, email } = await account();
    const device = /__Host-device=([^;]*)/.exec((await loginJson(email, PASSWORD)).headers.get("set-cookie") ?? "")?.[1];
    expect((await setPassword(db, id, "a brand new passphrase")).ok).toBe(true);
    await spendSignIns(limiterNames.signInAccount(email), SIGN_IN_LIMITS.perAccount, SIGN_IN_LIMITS.perAccount - 1);
    expect(
      (await loginJson(email, "a brand new passphrase", "/apiaas/login", { ...from("192.0.2.40"), Cookie: `__Host-device=${device}` }))
        .status,
    ).toBe(429);
  });

  it("a browser's device token has its own limit of guesses", async () => {
    const { email } = await account();
    const device = /__Host-device=([^;]*)/.exec((await loginJson(email, PASSWORD)).headers.get("set-cookie") ?? "")?.[1];
    const withDevice = (n: number) => ({ ...from(`198.18.0.${n}`), Cookie: `__Host-device=${device}` });
    for (let i = 0; i < SIGN_IN_LIMITS.perDevice; i++)
      expect((await loginJson(email, "wrong password!", "/apiaas/login", withDevice(i))).status).toBe(401);
    expect((await loginJson(email, PASSWORD, "/apiaas/login", withDevice(99))).status).toBe(429);
  });

  it("a browser's device token has a day's limit too, so one stolen guesses slowly for good", async () => {
    const { email } = await account();
    const device = /__Host-device=([^;]*)/.exec((await loginJson(email, PASSWORD)).headers.get("set-cookie") ?? "")![1]!;
    // The day's attempts spent in earlier minutes.
    const day = [{ name: "sign-in-day", period: "day" as const, limit: SIGN_IN_LIMITS.perDevicePerDay }];
    expect(
      (await rateLimiterFor(env, limiterNames.signInDevice(device.split(".")[0]!)).consume(day, SIGN_IN_LIMITS.perDevicePerDay)).allowed,
    ).toBe(true);
    expect((await loginJson(email, PASSWORD, "/apiaas/login", { ...from("198.18.1.1"), Cookie: `__Host-device=${device}` })).status).toBe(
      429,
    );
  });

  it("sign-ups naming a taken email count against their address, never against the account", async () => {
    const { email } = await account();
    const response = await exports.default.fetch("https://logos.test/portal/signup", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: "https://logos.test", ...from("192.0.2.30") },
      body: new URLSearchParams({ email, password: PASSWORD }).toString(),
    });
    expect(response.status).toBe(409);
    expect(await attemptsFor(email)).toBe(0);
  });

  it("row 12: wrong passwords from one address do not lock the owner out from another", async () => {
    const { email } = await account();
    await spendSignIns(
      limiterNames.signInAccountAtAddress(email, "203.0.113.66"),
      SIGN_IN_LIMITS.perAccountAndAddress,
      SIGN_IN_LIMITS.perAccountAndAddress,
    );
    expect((await loginJson(email, PASSWORD, "/apiaas/login", from("203.0.113.66"))).status).toBe(429);
    expect((await loginJson(email, PASSWORD, "/apiaas/login", from("192.0.2.10"))).status).toBe(200);
  });
});

describe("whoami and logout", () => {
  it("answer with the identity of the session, then forget it", async () => {
    const { email, id, clientId } = await account();
    const cookie = cookieOf(await loginJson(email, PASSWORD))!;
    for (const path of ["/apiaas/whoami", "/api/v1/auth/whoami"]) {
      const response = await whoami(cookie, path);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ account: { id, email, plan: "launch" }, clients: [{ id: clientId, name: "Default" }] });
    }
    const out = await exports.default.fetch("https://logos.test/apiaas/logout", {
      method: "POST",
      headers: { Cookie: `__Host-session=${cookie}`, Origin: "https://logos.test" },
    });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/__Host-session=;/);
    expect((await whoami(cookie)).status).toBe(401);
  });

  it("refuse requests without a valid session", async () => {
    for (const cookie of [undefined, "garbage", "x".repeat(500)]) {
      const response = await whoami(cookie);
      expect(response.status).toBe(401);
      expect(await errorBody(response)).toEqual({ error: "Not signed in", code: "unauthorized" });
    }
  });
});

describe("session security", () => {
  it("stores only hashes of session ids", async () => {
    const { email } = await account();
    const cookie = cookieOf(await loginJson(email, PASSWORD))!;
    expect(JSON.stringify(await db.select().from(sessions).all())).not.toContain(cookie);
  });

  it("deletes the account's expired sessions at its next sign-in, and no one else's", async () => {
    const { id, email } = await account();
    const other = await account();
    const long = new Date(Date.now() - 40 * 24 * 60 * 60 * 1000);
    const expired = (accountId: string) => ({
      idHash: crypto.randomUUID(),
      accountId,
      createdAt: long,
      expiresAt: new Date(long.getTime() + 1000),
    });
    await db.insert(sessions).values([expired(id), expired(id), expired(other.id)]);
    expect((await loginJson(email, PASSWORD)).status).toBe(200);
    const left = await db
      .select()
      .from(sessions)
      .where(inArray(sessions.accountId, [id, other.id]))
      .all();
    expect(left.filter((row) => row.accountId === id)).toHaveLength(1);
    expect(left.filter((row) => row.accountId === other.id)).toHaveLength(1);
  });

  it("issues a new id at sign-in and ends the one the browser brought (no fixation)", async () => {
    const { email } = await account();
    const planted = cookieOf(await loginJson(email, PASSWORD))!;
    const fresh = cookieOf(await loginJson(email, PASSWORD, "/apiaas/login", { Cookie: `__Host-session=${planted}` }))!;
    expect(fresh).not.toBe(planted);
    expect((await whoami(planted)).status).toBe(401);
    expect((await whoami(fresh)).status).toBe(200);
  });

  it("never lets one account's session read another's identity", async () => {
    const a = await account();
    const b = await account();
    const cookie = cookieOf(await loginJson(a.email, PASSWORD))!;
    const body = (await (await whoami(cookie)).json()) as { account: { id: string } };
    expect(body.account.id).toBe(a.id);
    expect(body.account.id).not.toBe(b.id);
  });
});
