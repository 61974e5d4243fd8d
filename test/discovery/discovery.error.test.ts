import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { findCompanyByDomain } from "../../src/catalogue/companies";
import { logosOfCompany } from "../../src/catalogue/logos";
import { discoverAndRecord, runDiscovery } from "../../src/discovery/run";
import { db } from "../helpers/catalogue";
import { BASE, fetchWith, freshKey } from "../lookup/helpers";
import { claimSite, image, page, png } from "./helpers";
import { writtenObjectKeys } from "../helpers/objects";

const get = (path: string) => exports.default.fetch(`${BASE}${path}`, { redirect: "manual" });

/** The real database, except that batches fail: the catalogue write a discovery ends with throws. */
function databaseFailingBatches(real: D1Database): D1Database {
  return {
    prepare: (query: string) => real.prepare(query),
    batch: () => Promise.reject(new Error("D1 batch: injected outage")),
    exec: (query: string) => real.exec(query),
    withSession: (constraint?: D1SessionConstraint) => real.withSession(constraint),
  } as unknown as D1Database;
}

describe("discovery that fails unexpectedly", () => {
  it("is remembered briefly: lookups meanwhile answer a miss without fetching the site, and the site is tried again soon after", async () => {
    const site = await claimSite({ "/": page('<link rel="icon" href="/i.png">'), "/i.png": image(png(64, 64)) });
    await expect(runDiscovery({ ...env, DB: databaseFailingBatches(env.DB) }, site.host, { refresh: false })).rejects.toThrow(
      "database unavailable",
    );
    const asked = (await site.requests()).length;
    expect(asked).toBeGreaterThan(0);

    const token = await freshKey();
    for (let i = 0; i < 3; i++) expect((await get(`/${site.host}?token=${token}`)).status).toBe(404);
    expect((await site.requests()).length).toBe(asked);

    const tenMinutesOn = Date.now() + 10 * 60 * 1000 + 1000;
    expect(await runDiscovery(env, site.host, { refresh: false }, tenMinutesOn)).toMatchObject({ status: "found" });
  });

  it("an icon found but not stored (R2 failing) is a miss for minutes, not the day a site with nothing gets", async () => {
    const site = await claimSite({ "/": page('<link rel="icon" href="/i.png">'), "/i.png": image(png(64, 64)) });
    const failingPuts = new Proxy(env.LOGOS, {
      get: (target, name) =>
        name === "put" ? () => Promise.reject(new Error("R2 put: injected outage")) : Reflect.get(target, name).bind(target),
    });
    expect(await runDiscovery({ ...env, LOGOS: failingPuts }, site.host, { refresh: false })).toMatchObject({
      status: "nothing",
      reason: expect.stringMatching(/^catalogue write failed/),
    });
    expect(await runDiscovery(env, site.host, { refresh: false })).toMatchObject({ status: "nothing", reason: "remembered miss" });
    const tenMinutesOn = Date.now() + 10 * 60 * 1000 + 1000;
    expect(await runDiscovery(env, site.host, { refresh: false }, tenMinutesOn)).toMatchObject({ status: "found" });
  });
});

/** The monogram's lifetime in seconds, from its Cache-Control. */
const maxAgeOf = (response: Response) => Number(/max-age=(\d+)/.exec(response.headers.get("cache-control") ?? "")?.[1]);

describe("the monogram standing in for a discovery that failed", () => {
  it("is cached no longer than the failure is remembered (ten minutes), where a site with nothing gets the hour", async () => {
    const site = await claimSite({ "/": page('<link rel="icon" href="/i.png">'), "/i.png": image(png(64, 64)) });
    await expect(runDiscovery({ ...env, DB: databaseFailingBatches(env.DB) }, site.host, { refresh: false })).rejects.toThrow();
    const token = await freshKey();
    const failed = await get(`/${site.host}?token=${token}&fallback=monogram`);
    expect(failed.headers.get("x-logo-source")).toBe("monogram");
    expect(maxAgeOf(failed)).toBeGreaterThanOrEqual(60);
    expect(maxAgeOf(failed)).toBeLessThanOrEqual(600);

    const empty = await claimSite({ "/": page("<title>Nothing Here</title>") });
    expect((await get(`/${empty.host}?token=${token}&fallback=monogram`)).headers.get("cache-control")).toBe("public, max-age=3600");
  });

  it("is cached for a minute when the discovery could not be asked at all (its coordinator unreachable)", async () => {
    const coordinator = {
      idFromName: () => ({}),
      get: () => ({ discover: () => Promise.reject(new Error("Durable Object: injected outage")) }),
    } as unknown as Env["DISCOVERY_COORDINATOR"];
    const token = await freshKey();
    const response = await fetchWith(
      { DISCOVERY_COORDINATOR: coordinator },
      `${BASE}/unasked-${crypto.randomUUID().slice(0, 8)}.com?token=${token}&fallback=monogram`,
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("public, max-age=60");
  });
});

/**
 * The real database, but a batch that writes first waits for `before` to settle; `onRead` is
 * told when a batch that only reads has run (the importer's read of the catalogue).
 */
function databaseWritingAfter(real: D1Database, before: Promise<unknown>, onRead: () => void = () => undefined): D1Database {
  const queries = new WeakMap<D1PreparedStatement, string>();
  return {
    prepare: (query: string) => {
      const statement = real.prepare(query);
      const bind = statement.bind.bind(statement);
      // Bound statements are new objects: each keeps its query.
      statement.bind = (...values: unknown[]) => {
        const bound = bind(...values);
        queries.set(bound, query);
        return bound;
      };
      queries.set(statement, query);
      return statement;
    },
    batch: async (statements: D1PreparedStatement[]) => {
      const writes = statements.some((statement) => /^\s*(insert|update|delete)/i.test(queries.get(statement) ?? ""));
      if (!writes) return real.batch(statements).finally(onRead);
      await before.catch(() => undefined);
      return real.batch(statements);
    },
    exec: (query: string) => real.exec(query),
    withSession: () => databaseWritingAfter(real, before, onRead),
  } as unknown as D1Database;
}

describe("two discoveries of one new domain racing", () => {
  // The loser's write fails on the winner's company_domains row; asking whether its own write
  // landed (its updated_at), it deleted the content-addressed objects the winner's row names.
  it("leave every object the stored logo names in place", async () => {
    const site = await claimSite({ "/": page('<link rel="icon" href="/i.png">'), "/i.png": image(png(64, 64)) });
    // Both read the catalogue before either writes (`admin discover` beside the coordinator):
    // the winner writes once the loser has read, the loser once the winner is done.
    const { promise: loserRead, resolve: readDone } = Promise.withResolvers<void>();
    const now = Date.now();
    const winner = discoverAndRecord({ ...env, DB: databaseWritingAfter(env.DB, loserRead) }, site.host, { refresh: true }, now);
    const loser = discoverAndRecord({ ...env, DB: databaseWritingAfter(env.DB, winner, readDone) }, site.host, { refresh: true }, now + 1);
    const [won, lost] = await Promise.all([winner, loser]);
    expect(won.outcome).toBe("found");
    expect(lost).toMatchObject({ outcome: "nothing", storageFailed: true });
    const [logo] = await logosOfCompany(db, (await findCompanyByDomain(db, site.host))!);
    const stored = writtenObjectKeys(logo!);
    expect(stored).toEqual(expect.arrayContaining([logo!.masterKey, logo!.originalKey]));
    for (const key of stored) expect(await env.LOGOS.head(key), key).not.toBeNull();
  });
});
