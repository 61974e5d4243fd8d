import { describe, expect, it } from "vitest";
import { verifyAskedKey } from "../../src/keys/unknownKeys";
import { limitedAddress } from "../../src/lib/address";
import { db } from "../helpers/catalogue";
import { freezeClock } from "../helpers/clock";
import { BASE, fetchWith, freshCompany, freshKey } from "../lookup/helpers";
import { errorBody } from "../helpers/errors";

/**
 * Made-up keys from one address (src/keys/unknownKeys.ts): each costs a D1 read until the
 * address is past KEY_MISSES' 100 a minute (wrangler.toml), then its unknown keys are refused
 * for a minute without one. Miniflare's binding counts wall-clock minutes in a runtime of its
 * own, which no clock of the tests moves: the tests that count misses exactly give the Worker
 * a binding with wrangler.toml's limit and one window that never turns (fixedWindow), and one
 * test asks the real binding what holds however its minute falls. fetchWith waits for the
 * deferred count, as the next request of a real client would find it done.
 */
const wranglerToml = Object.values(import.meta.glob("../../wrangler.toml", { query: "?raw", import: "default", eager: true }))[0] as string;
const KEY_MISSES = (() => {
  const match = /name = "KEY_MISSES"[^[]*?simple = \{ limit = (\d+), period = (\d+) \}/.exec(wranglerToml);
  if (!match) throw new Error("wrangler.toml declares no KEY_MISSES rate limit");
  return { limit: Number(match[1]), period: Number(match[2]) };
})();

/** A KEY_MISSES binding with wrangler.toml's limit in a single window, and the keys it was asked about. */
function fixedWindow(): { binding: RateLimit; asked: string[] } {
  const asked: string[] = [];
  const counts = new Map<string, number>();
  const binding = {
    limit: async ({ key }: { key: string }) => {
      asked.push(key);
      const count = counts.get(key) ?? 0;
      if (count >= KEY_MISSES.limit) return { success: false };
      counts.set(key, count + 1);
      return { success: true };
    },
  } as unknown as RateLimit;
  return { binding, asked };
}
const madeUp = (prefix: "pk" | "sk") => `${prefix}_${crypto.randomUUID().replaceAll("-", "")}`;
/** An IPv6 address of a /64 of its own. */
const address = () => `2001:db8:${crypto.randomUUID().slice(0, 4)}:${crypto.randomUUID().slice(0, 4)}::1`;
const from = (ip: string, headers: Record<string, string> = {}) => ({
  headers: { "CF-Connecting-IP": ip, ...headers },
  redirect: "manual" as const,
});

/** Unknown publishable keys from `ip` until one is refused, at most `most`: how many were answered 401 first. */
async function spendUnknownKeys(vars: Partial<Env>, ip: string, most: number): Promise<{ answered401: number; refused: Response | null }> {
  for (let n = 0; n < most; n++) {
    const response = await fetchWith(vars, `${BASE}/github.com?token=${madeUp("pk")}`, from(ip));
    if (response.status === 429) return { answered401: n, refused: response };
    expect(response.status).toBe(401);
  }
  return { answered401: most, refused: null };
}

describe("unknown keys from one address", () => {
  it("are answered 401 a hundred times a minute, then refused for the minute; keys it knows and other addresses go on", async () => {
    const clock = freezeClock();
    const { binding } = fixedWindow();
    const vars = { KEY_MISSES: binding };
    const ip = address();
    const { domain } = await freshCompany();
    const known = await freshKey();
    expect((await fetchWith(vars, `${BASE}/${domain}?token=${known}`, from(ip))).status).toBe(302);

    const { answered401, refused } = await spendUnknownKeys(vars, ip, KEY_MISSES.limit + 10);
    expect(KEY_MISSES.limit).toBe(100);
    expect(answered401).toBe(101);
    // The spec's 429: its message, Retry-After and X-RateLimit-Reset; and CORS, as a 401 has.
    expect(await refused!.text()).toBe("Rate limit exceeded");
    expect(refused!.headers.get("retry-after")).toBe("60");
    expect(Number(refused!.headers.get("x-ratelimit-reset"))).toBe(Math.ceil(clock.now / 1000) + 60);
    expect(refused!.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(refused!.headers.get("access-control-allow-origin")).toBe("*");
    // Its preflight passes as an unknown key's does, so that the page can read the 429.
    const preflight = await fetchWith(vars, `${BASE}/github.com?token=${madeUp("pk")}`, {
      ...from(ip, { Origin: "https://page.example", "Access-Control-Request-Method": "GET" }),
      method: "OPTIONS",
    });
    expect(preflight.status).toBe(204);

    // A key the isolate knows costs no read, and keeps working from that address.
    expect((await fetchWith(vars, `${BASE}/${domain}?token=${known}`, from(ip))).status).toBe(302);
    // The REST API refuses the address's unknown secret keys the same way, in JSON.
    const rest = await fetchWith(vars, `${BASE}/v1/companies/search?q=acme`, from(ip, { Authorization: `Bearer ${madeUp("sk")}` }));
    expect(rest.status).toBe(429);
    expect(await errorBody(rest)).toEqual({ error: "Rate limit exceeded", code: "rate_limited" });
    expect(rest.headers.get("retry-after")).toBe("60");
    // And so do the billing routes, which take a secret key too.
    const billing = await fetchWith(vars, `${BASE}/apiaas/billing/status`, from(ip, { Authorization: `Bearer ${madeUp("sk")}` }));
    expect(billing.status).toBe(429);
    expect(await errorBody(billing)).toEqual({ error: "Rate limit exceeded", code: "rate_limited" });
    // Another address is not touched.
    expect((await fetchWith(vars, `${BASE}/github.com?token=${madeUp("pk")}`, from(address()))).status).toBe(401);
  });

  it("are refused by the deployment's own binding once past its limit, wherever its wall-clock minute turns", async () => {
    // Miniflare's KEY_MISSES counts from zero in each wall-clock minute: a turn during the run
    // starts the count again once, so the refusal comes after one to two windows' worth.
    const { answered401, refused } = await spendUnknownKeys({}, address(), 2 * KEY_MISSES.limit + 2);
    expect(refused?.status).toBe(429);
    expect(answered401).toBeGreaterThanOrEqual(KEY_MISSES.limit + 1);
    expect(answered401).toBeLessThanOrEqual(2 * KEY_MISSES.limit + 1);
  });

  it("are only counted when they cost a read: malformed ones and a request without an address are not", async () => {
    const { binding, asked } = fixedWindow();
    const vars = { KEY_MISSES: binding };
    const ip = address();
    for (let n = 0; n < 120; n++) expect((await fetchWith(vars, `${BASE}/github.com?token=pk_short${n}`, from(ip))).status).toBe(401);
    for (let n = 0; n < 120; n++) expect((await fetchWith(vars, `${BASE}/github.com?token=${madeUp("pk")}`)).status).toBe(401);
    expect(asked).toEqual([]);
    expect((await spendUnknownKeys(vars, ip, 3)).answered401).toBe(3);
    expect(asked).toEqual(Array(3).fill(limitedAddress(ip)));
  });

  it("are counted per IPv4 address and per IPv6 /64, so a host cannot go round the limit by its other addresses", async () => {
    expect(limitedAddress("203.0.113.7")).toBe("203.0.113.7");
    expect(limitedAddress("2001:DB8:0a:b:1::5")).toBe("2001:db8:a:b::/64");
    expect(limitedAddress("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(limitedAddress("::1")).toBe("0:0:0:0::/64");
    expect(limitedAddress("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(limitedAddress("fe80::1%eth0")).toBe("fe80:0:0:0::/64");

    const vars = { KEY_MISSES: fixedWindow().binding };
    const block = `2001:db8:${crypto.randomUUID().slice(0, 4)}:${crypto.randomUUID().slice(0, 4)}`;
    expect((await spendUnknownKeys(vars, `${block}::1`, KEY_MISSES.limit + 10)).answered401).toBe(KEY_MISSES.limit + 1);
    const sibling = await fetchWith(vars, `${BASE}/github.com?token=${madeUp("pk")}`, from(`${block}:ffff:1:2:3`));
    expect(sibling.status).toBe(429);
  });

  it("refused, still let through a key found live here, once the key cache has let it go", async () => {
    const request = new Request(BASE, { headers: { "CF-Connecting-IP": address() } });
    const deferred: Array<Promise<unknown>> = [];
    const defer = (work: Promise<unknown>) => void deferred.push(work);
    // A limiter past its limit from the first miss on.
    const spent = { KEY_MISSES: { limit: async () => ({ success: false }) } as unknown as RateLimit };
    const live = await freshKey();
    const t0 = Date.now();
    expect(await verifyAskedKey(db, spent, request, live, defer, t0)).toMatchObject({ type: "publishable" });
    expect(await verifyAskedKey(db, spent, request, madeUp("pk"), defer, t0)).toBeNull();
    await Promise.all(deferred);
    expect(await verifyAskedKey(db, spent, request, madeUp("pk"), defer, t0 + 1)).toBe("refused");
    // Past KEY_CACHE_TTL_MS the live key takes a read again: it gets one.
    expect(await verifyAskedKey(db, spent, request, live, defer, t0 + 11_000)).toMatchObject({ type: "publishable" });
    expect(await verifyAskedKey(db, spent, request, madeUp("pk"), defer, t0 + 11_000)).toBe("refused");
  });
});
