import { env, exports } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { discoverOnMiss } from "../../src/discovery/onMiss";
import { clearIsolateCaches } from "../../src/lib/isolateCaches";
import { DISCOVERY_COUNTER, type DiscoveryRequester, discoveryWindows } from "../../src/limits/discoveryLimits";
import { planLimits } from "../../src/limits/plans";
import { limiterNames, rateLimiterFor } from "../../src/limits/rateLimiterClient";
import { addAccount, addKey, db } from "../helpers/catalogue";
import { BASE } from "../lookup/helpers";
import { claimSite, image, page, png } from "./helpers";
import { accounts } from "../../schema";
import { eq } from "drizzle-orm";

/**
 * Budgets that hold: an account whose email is not confirmed discovers few domains a
 * day (DISCOVERY_UNCONFIRMED_PER_DAY, 20), an address and the deployment have daily ceilings of
 * their own, and a budget the isolate knows is spent costs no Durable Object and no database read.
 */
const site = () => claimSite({ "/": page('<link rel="icon" href="/i.png">'), "/i.png": image(png(64, 64)) });
const lookup = (host: string, token: string, address?: string) =>
  exports.default.fetch(`${BASE}/${host}?token=${token}`, {
    redirect: "manual",
    headers: address ? { "CF-Connecting-IP": address } : {},
  });

/** Counts `used` of today's discoveries against an account's limiter, as its lookups would have. */
async function spent(accountId: string, used: number) {
  if (used > 0)
    await rateLimiterFor(env, limiterNames.discovery(accountId)).consume(discoveryWindows(used), used, Date.now(), DISCOVERY_COUNTER);
}

const requester = (accountId: string, address: string | null = null): DiscoveryRequester => ({
  accountId,
  plan: "free",
  emailConfirmed: true,
  address,
});

beforeEach(() => {
  // What a spent budget taught the isolate lasts the day: each test starts from a fresh isolate's memory.
  clearIsolateCaches();
});

describe("an account whose email is not confirmed", () => {
  it("discovers 20 domains a day, not its plan's 500; past them a miss asks no site, until the address is confirmed", async () => {
    expect(planLimits.free.discoveriesPerDay).toBe(500);
    const account = await addAccount("free", { emailConfirmed: false });
    await spent(account.id, 19);
    const token = await addKey(account.id);

    const twentieth = await site();
    expect((await lookup(twentieth.host, token)).headers.get("x-logo-source")).toBe("discovered");
    const beyond = await site();
    const refused = await lookup(beyond.host, token);
    expect(refused.status).toBe(404);
    expect(await beyond.requests()).toEqual([]);

    // Confirmed (a fresh key: the isolate trusts what it read of the old one for ten seconds),
    // the account has its plan's budget, and the same domain is discovered.
    await db.update(accounts).set({ emailConfirmedAt: new Date() }).where(eq(accounts.id, account.id));
    const confirmedToken = await addKey(account.id);
    const found = await lookup(beyond.host, confirmedToken);
    expect(found.status).toBe(302);
    expect(found.headers.get("x-logo-source")).toBe("discovered");
  });
});

describe("a spent budget known in the isolate", () => {
  it("refuses a discovery without asking any Durable Object or reading the database", async () => {
    const account = await addAccount("free");
    await spent(account.id, planLimits.free.discoveriesPerDay);
    const first = await site();
    // The first refusal comes from the account's limiter, through the domain's coordinator...
    expect(await discoverOnMiss(env, first.host, requester(account.id))).toMatchObject({ found: false });

    // ...and the isolate remembers it: the next miss touches none of the bindings.
    const touched = new Set<string>();
    const watched = new Proxy(env, {
      get(target, name, receiver) {
        touched.add(String(name));
        return Reflect.get(target, name, receiver);
      },
    });
    const second = await site();
    expect(await discoverOnMiss(watched, second.host, requester(account.id))).toMatchObject({ found: false, site: null });
    expect([...touched].filter((name) => ["DB", "DISCOVERY_COORDINATOR", "RATE_LIMITER", "DISCOVERY_QUEUE"].includes(name))).toEqual([]);
    expect(await first.requests()).toEqual([]);
    expect(await second.requests()).toEqual([]);

    // Another account of the same isolate is not held to it.
    const other = await addAccount("free");
    expect(await discoverOnMiss(env, second.host, requester(other.id))).toMatchObject({ found: true });
  });
});

describe("ceilings beside the account's", () => {
  it("an address discovers at most DISCOVERY_ADDRESS_PER_DAY a day, whatever accounts it uses", async () => {
    const ceiling = { ...env, DISCOVERY_ADDRESS_PER_DAY: "1" };
    const [a, b, c] = [await addAccount("free"), await addAccount("free"), await addAccount("free")];
    const [one, two] = [await site(), await site()];
    expect(await discoverOnMiss(ceiling, one.host, requester(a.id, "198.51.100.7"))).toMatchObject({ found: true });
    expect(await discoverOnMiss(ceiling, two.host, requester(b.id, "198.51.100.7"))).toMatchObject({ found: false });
    expect(await two.requests()).toEqual([]);
    // The refused account's own budget kept nothing of it (its dashboard's figure stays 0).
    const [usage] = await rateLimiterFor(env, limiterNames.discovery(b.id)).usage(discoveryWindows(500));
    expect(usage!.used).toBe(0);
    // Another address is not held to it.
    expect(await discoverOnMiss(ceiling, two.host, requester(c.id, "203.0.113.9"))).toMatchObject({ found: true });
    // Nor is a paying account, whose requests may all come from one server.
    const paying = await addAccount("launch");
    const three = await site();
    expect(await discoverOnMiss(ceiling, three.host, { ...requester(paying.id, "198.51.100.7"), plan: "launch" })).toMatchObject({
      found: true,
    });
  });

  it("the deployment discovers at most DISCOVERY_DEPLOYMENT_PER_DAY a day, whoever asks", async () => {
    const ceiling = { ...env, DISCOVERY_DEPLOYMENT_PER_DAY: "1" };
    const [a, b] = [await addAccount("free"), await addAccount("growth")];
    const [one, two] = [await site(), await site()];
    expect(await discoverOnMiss(ceiling, one.host, requester(a.id, "198.51.100.7"))).toMatchObject({ found: true });
    expect(await discoverOnMiss(ceiling, two.host, { ...requester(b.id, "203.0.113.9"), plan: "growth" })).toMatchObject({
      found: false,
    });
    expect(await two.requests()).toEqual([]);
  });

  it("the ceilings are configurable and validated: a negative or non-numeric one is a misconfiguration, not a 500 with detail", async () => {
    const { checkedVars } = await import("../../src/env");
    expect(checkedVars({ ...env, DISCOVERY_ADDRESS_PER_DAY: "-1" } as Env)).toMatchObject({ ok: false });
    expect(checkedVars({ ...env, DISCOVERY_DEPLOYMENT_PER_DAY: "many" } as Env)).toMatchObject({ ok: false });
    expect(checkedVars({ ...env, DISCOVERY_UNCONFIRMED_PER_DAY: "" } as Env)).toMatchObject({
      ok: true,
      value: { DISCOVERY_UNCONFIRMED_PER_DAY: 20 },
    });
  });
});
