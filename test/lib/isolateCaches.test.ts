import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import "../../src/index";
import { clearIsolateCaches, ISOLATE_CACHE_BUDGET_BYTES, ISOLATE_MEMORY_BYTES, isolateCaches } from "../../src/lib/isolateCaches";
import { BASE, freshCompany, freshKey } from "../lookup/helpers";

/**
 * The isolate's caches (src/lib/isolateCaches.ts), all loaded with the Worker: listed once
 * each, described, and together, full of their largest entries, within the stated budget.
 */
describe("the isolate's caches", () => {
  const caches = isolateCaches();
  const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

  it("are all listed, each with a name, what it holds and a bound", () => {
    const names = caches.map((cache) => cache.name);
    // The caches of the lookup's hot path, of keys and of the catalogue are among them.
    expect(names).toEqual(
      expect.arrayContaining(["lookup.warmAsks", "lookup.parsedQueries", "lookup.subjects", "catalogue.resolved", "keys.verified"]),
    );
    expect(names.length).toBeGreaterThanOrEqual(15);
    for (const cache of caches) {
      expect(cache.name, cache.name).toMatch(/^[a-z]+\.[A-Za-z]+$/);
      expect(cache.holds.length, cache.name).toBeGreaterThan(10);
      expect(cache.capacity, cache.name).toBeGreaterThan(0);
      expect(cache.worstBytes, cache.name).toBeGreaterThan(0);
    }
  });

  it("fit their budget, half the isolate's memory, full of their largest entries all at once", () => {
    const total = caches.reduce((sum, cache) => sum + cache.worstBytes, 0);
    const table = caches
      .toSorted((a, b) => b.worstBytes - a.worstBytes)
      .map((cache) => `${cache.name.padEnd(28)} ${mib(cache.worstBytes).padStart(10)}`)
      .join("\n");
    expect(ISOLATE_CACHE_BUDGET_BYTES).toBeLessThanOrEqual(ISOLATE_MEMORY_BYTES / 2);
    expect(total, `${table}\n${"total".padEnd(28)} ${mib(total).padStart(10)}`).toBeLessThanOrEqual(ISOLATE_CACHE_BUDGET_BYTES);
  });

  it("empty at once for a test that needs a fresh isolate", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    expect((await exports.default.fetch(`${BASE}/${domain}?token=${token}`, { redirect: "manual" })).status).toBe(302);
    const holding = () => Object.fromEntries(caches.filter((cache) => cache.size() > 0).map((cache) => [cache.name, cache.size()]));
    expect(Object.keys(holding())).toEqual(expect.arrayContaining(["catalogue.resolved", "keys.verified", "lookup.subjects"]));
    clearIsolateCaches();
    expect(holding()).toEqual({});
  });
});
