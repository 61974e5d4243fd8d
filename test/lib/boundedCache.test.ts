import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { readVars, varsSchema } from "../../src/env";
import { BoundedCache, ExpiringCache } from "../../src/lib/boundedCache";

describe("BoundedCache", () => {
  it("keeps at most its capacity, dropping the oldest entry and handing it back; a value stored again is new again", () => {
    const cache = new BoundedCache<string, number>(2);
    expect(cache.set("a", 1)).toBeUndefined();
    expect(cache.set("b", 2)).toBeUndefined();
    expect(cache.set("a", 10)).toBeUndefined();
    expect(cache.set("c", 3)).toEqual(["b", 2]);
    expect([cache.get("a"), cache.get("b"), cache.get("c"), cache.size]).toEqual([10, undefined, 3, 2]);
  });

  it("remembers a made value once, and null as a value", () => {
    const cache = new BoundedCache<string, string | null>(4);
    let made = 0;
    const make = () => (made++, null);
    expect(cache.remember("miss", make)).toBeNull();
    expect(cache.remember("miss", make)).toBeNull();
    expect(made).toBe(1);
  });
});

describe("ExpiringCache", () => {
  it("trusts an entry for its lifetime only", () => {
    const cache = new ExpiringCache<string, string>(4, 1000);
    cache.set("k", "v", 5000);
    expect(cache.get("k", 5999)).toBe("v");
    expect(cache.get("k", 6000)).toBeUndefined();
  });
});

describe("readVars", () => {
  it("sees a change of any variable of the schema, never an answer cached for other values", () => {
    const changed: Record<string, string> = {
      PUBLIC_BASE_URL: "https://logos.example.com",
      CDN_URL: "https://cdn.example.com",
      LOOKUP_RESPONSE: "bytes",
      ANTHROPIC_BASE_URL: "https://files.example.com",
      STRIPE_API_BASE: "https://stripe.example.com",
      STRIPE_PRICE_LAUNCH: "price_other_launch",
      STRIPE_PRICE_GROWTH: "price_other_growth",
      STRIPE_PRICE_ENTERPRISE: "price_other_enterprise",
      SIGNUP: "off",
      DISCOVERY: "off",
      DISCOVERY_BUDGET_MS: "100",
      DISCOVERY_MISS_TTL_S: "60",
      DISCOVERY_RESOLVE: "a.test=127.0.0.1:9",
      CDN_PURGE_ZONE_ID: "0123456789abcdef0123456789abcdef",
      CLOUDFLARE_API_BASE: "https://api.example.com/client/v4",
      DNS_RESOLVER_URL: "https://dns.example.com/dns-query",
      DISCOVERY_UNCONFIRMED_PER_DAY: "5",
      DISCOVERY_ADDRESS_PER_DAY: "50",
      DISCOVERY_DEPLOYMENT_PER_DAY: "500",
      MAIL_API_BASE: "https://mail.example.com",
      MAIL_FROM: "other@example.com",
      ACCESS_LOG: "all",
      DOCS_URL: "https://docs.example.com",
    };
    const names = Object.keys(varsSchema.shape);
    for (const name of names) {
      const value = changed[name];
      expect(value, `a changed value for ${name}`).toBeDefined();
      readVars(env);
      expect(String((readVars({ ...env, [name]: value } as Env) as Record<string, unknown>)[name])).toBe(value);
    }
  });
});

describe("BoundedCache with a byte budget", () => {
  const sized = () => new BoundedCache<string, string>(100, { maxBytes: 100, sizeOf: (key, value) => key.length + value.length });

  it("drops the oldest entries until the new one fits the bytes, whatever the count", () => {
    const cache = sized();
    cache.set("a", "x".repeat(39));
    cache.set("b", "x".repeat(39));
    expect(cache.heldBytes).toBe(80);
    cache.set("c", "x".repeat(39));
    expect([cache.get("a"), cache.get("b")?.length, cache.get("c")?.length, cache.heldBytes]).toEqual([undefined, 39, 39, 80]);
  });

  it("never keeps an entry larger than the whole budget, and counts a replaced entry once", () => {
    const cache = sized();
    cache.set("a", "x".repeat(9));
    cache.set("huge", "x".repeat(200));
    expect([cache.get("huge"), cache.get("a"), cache.heldBytes]).toEqual([undefined, "x".repeat(9), 10]);
    cache.set("a", "x".repeat(19));
    expect(cache.heldBytes).toBe(20);
    cache.delete("a");
    expect([cache.size, cache.heldBytes]).toEqual([0, 0]);
  });
});
