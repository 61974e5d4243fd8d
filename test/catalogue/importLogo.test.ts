import { env } from "cloudflare:workers";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { companies, companyDomains, companyTickers, logos } from "../../schema";
import { type CompanyLogoInput, importCompanyLogo } from "../../src/catalogue/importLogo";
import { nameKey } from "../../src/catalogue/names";
import { DISCOVERED_PROMINENCE } from "../../src/catalogue/provenance";
import { RETIRED_FOR_MS } from "../../src/catalogue/retiredObjects";
import { findLogo } from "../../src/catalogue/logos";
import { searchCompanies } from "../../src/catalogue/search";
import { createDb } from "../../src/lib/db";
import { fail, ok } from "../../src/lib/errors";
import { sha256Hex } from "../../src/lib/encoding";
import { logoObjectKeys } from "../../src/images/objectKeys";
import { RENDITIONS_VERSION } from "../../src/images/renditions";
import { blackPng, preparedFrom, redPng } from "../fixtures/images";

const db = createDb(env.DB);

async function input(overrides: Partial<CompanyLogoInput> = {}, png = blackPng): Promise<CompanyLogoInput> {
  return {
    name: "Acme Rockets",
    domains: ["acme.com", "acme.io"],
    ticker: { symbol: "ACME", exchange: "NYSE" },
    aliases: ["Acme"],
    brandColor: "#ff0000",
    prominence: 1,
    variant: "icon",
    sourceSet: "test",
    licence: "CC0-1.0",
    sourceHash: await sha256Hex(png),
    ...overrides,
  };
}

async function objectKeys(): Promise<string[]> {
  return (await env.LOGOS.list({ prefix: "logos/" })).objects.map((o) => o.key).sort();
}

async function search(query: string): Promise<number[]> {
  const rows = await env.DB.prepare("SELECT rowid AS id FROM catalogue_search WHERE catalogue_search MATCH ?1 ORDER BY rank")
    .bind(query)
    .all<{ id: number }>();
  return rows.results.map((r) => r.id);
}

describe("importCompanyLogo", () => {
  it("creates the company with its domains, ticker and logo, and stores every rendition", async () => {
    const result = await importCompanyLogo(db, env.LOGOS, await input(), async () => ok(await preparedFrom(blackPng)));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.outcome).toBe("created");

    const company = await db.query.companies.findFirst({ where: eq(companies.id, result.value.companyId) });
    expect(company).toMatchObject({ name: "Acme Rockets", nameKey: "acmerockets", aliases: ["Acme"], brandColor: "#ff0000" });
    const domains = await db.select().from(companyDomains).where(eq(companyDomains.companyId, result.value.companyId)).all();
    expect(domains.map((d) => [d.domain, d.isPrimary]).sort()).toEqual([
      ["acme.com", true],
      ["acme.io", false],
    ]);
    expect(await db.select().from(companyTickers).all()).toEqual([{ ticker: "ACME", exchange: "NYSE", companyId: result.value.companyId }]);

    const logo = (await findLogo(db, result.value.logoId))?.logo;
    expect(logo).toMatchObject({
      variant: "icon",
      format: "png",
      width: 4,
      height: 2,
      tone: "dark",
      licence: "CC0-1.0",
      sourceSet: "test",
    });
    expect(logo!.contentHash).toBe(await sha256Hex(blackPng));
    const keys = await objectKeys();
    expect(keys).toHaveLength(5);
    expect(logo!.renditions).toEqual({ version: RENDITIONS_VERSION, light: false, dark: true, plain: "master", vector: false });
    for (const key of logoObjectKeys(logo!)) {
      expect(keys).toContain(key);
      expect(key).toMatch(/^logos\/acme\.com\/icon\.test\.[0-9a-f]{16}\./);
    }
    const master = await env.LOGOS.get(logo!.masterKey);
    expect(master?.httpMetadata?.contentType).toBe("image/png");
    expect(new Uint8Array(await master!.arrayBuffer())).toEqual(blackPng);
  });

  it("makes the company searchable by name, alias and ticker within the same write", async () => {
    const result = await importCompanyLogo(db, env.LOGOS, await input(), async () => ok(await preparedFrom(blackPng)));
    if (!result.ok) throw new Error(result.error.message);
    const id = result.value.companyId;
    expect(await search("rockets")).toEqual([id]);
    expect(await search("acm*")).toEqual([id]);
    expect(await search("tickers:ACME")).toEqual([id]);
    // Domains are found by the domain index, not as words.
    expect(await search("io")).toEqual([]);
    expect((await searchCompanies(db, "acme.i", 5)).map((hit) => hit.companyId)).toEqual([id]);

    await db.delete(companies).where(eq(companies.id, id));
    expect(await search("rockets")).toEqual([]);
  });

  it("changes nothing when the same row is imported again", async () => {
    const first = await importCompanyLogo(db, env.LOGOS, await input(), async () => ok(await preparedFrom(blackPng)));
    const before = { rows: await db.select().from(logos).all(), keys: await objectKeys() };
    let converted = false;
    const second = await importCompanyLogo(db, env.LOGOS, await input(), async () => {
      converted = true;
      return ok(await preparedFrom(blackPng));
    });
    expect(second).toEqual({ ok: true, value: { ...(first.ok ? first.value : {}), outcome: "unchanged" } });
    expect(converted).toBe(false);
    expect(await db.select().from(logos).all()).toEqual(before.rows);
    expect(await objectKeys()).toEqual(before.keys);
  });

  const red = () =>
    preparedFrom(redPng, {
      tone: "mixed",
      files: { master: redPng, grey: redPng },
      renditions: { version: RENDITIONS_VERSION, light: false, dark: false, plain: "master", vector: false },
    });

  it("replaces a changed image, keeping the old one's objects two days for redirects cached before, then deleting them", async () => {
    const replacedAt = Date.now();
    await importCompanyLogo(db, env.LOGOS, await input(), async () => ok(await preparedFrom(blackPng)), new Date(replacedAt));
    const oldKeys = await objectKeys();
    const result = await importCompanyLogo(db, env.LOGOS, await input({}, redPng), async () => ok(await red()), new Date(replacedAt));
    expect(result.ok ? result.value.outcome : result.error.message).toBe("updated");
    const logo = (await findLogo(db, result.ok ? result.value.logoId : 0))!.logo;
    expect(logo).toMatchObject({ tone: "mixed", renditions: { dark: false }, contentHash: await sha256Hex(redPng) });
    expect(await db.select().from(logos).all()).toHaveLength(1);
    const newKeys = logoObjectKeys(logo);
    expect(newKeys.filter((k) => oldKeys.includes(k))).toEqual([]);
    // A page or CDN holding a redirect to the old image still finds it.
    expect(await objectKeys()).toEqual([...oldKeys, ...newKeys].sort());

    // A catalogue write a day later leaves them; one two days later deletes them, and only them.
    const other = async (at: number, name: string) =>
      importCompanyLogo(
        db,
        env.LOGOS,
        await input({ name, domains: [`${name.toLowerCase()}.example`], ticker: undefined, aliases: [] }, redPng),
        async () => ok(await red()),
        new Date(at),
      );
    await other(replacedAt + RETIRED_FOR_MS / 2, "Later");
    expect(await objectKeys()).toEqual(expect.arrayContaining(oldKeys));
    const last = await other(replacedAt + RETIRED_FOR_MS + 1, "Latest");
    const remaining = await objectKeys();
    expect(remaining.filter((k) => oldKeys.includes(k))).toEqual([]);
    expect(remaining).toEqual(
      expect.arrayContaining([...newKeys, ...logoObjectKeys((await findLogo(db, last.ok ? last.value.logoId : 0))!.logo)]),
    );
  });

  it("keeps the objects of an image that came back before its old objects' time", async () => {
    const replacedAt = Date.now();
    await importCompanyLogo(db, env.LOGOS, await input(), async () => ok(await preparedFrom(blackPng)), new Date(replacedAt));
    const blackKeys = await objectKeys();
    await importCompanyLogo(db, env.LOGOS, await input({}, redPng), async () => ok(await red()), new Date(replacedAt));
    const back = await importCompanyLogo(
      db,
      env.LOGOS,
      await input(),
      async () => ok(await preparedFrom(blackPng)),
      new Date(replacedAt + 3_600_000),
    );
    expect(logoObjectKeys((await findLogo(db, back.ok ? back.value.logoId : 0))!.logo).sort()).toEqual(blackKeys);
    await importCompanyLogo(
      db,
      env.LOGOS,
      await input({ name: "Later", domains: ["later.example"], ticker: undefined, aliases: [] }, redPng),
      async () => ok(await red()),
      new Date(replacedAt + 3 * RETIRED_FOR_MS),
    );
    expect(await objectKeys()).toEqual(expect.arrayContaining(blackKeys));
  });

  it("adds new domains and aliases to a known company without touching its primary domain", async () => {
    await importCompanyLogo(db, env.LOGOS, await input(), async () => ok(await preparedFrom(blackPng)));
    const result = await importCompanyLogo(
      db,
      env.LOGOS,
      await input({ domains: ["acme.io", "acme.co.uk"], aliases: ["ACME Corp"], variant: "full" }),
      async () => ok(await preparedFrom(redPng)),
    );
    expect(result.ok).toBe(true);
    const domains = await db.select().from(companyDomains).all();
    expect(domains.map((d) => [d.domain, d.isPrimary]).sort()).toEqual([
      ["acme.co.uk", false],
      ["acme.com", true],
      ["acme.io", false],
    ]);
    expect((await db.select().from(companies).all())[0]!.aliases).toEqual(["Acme", "ACME Corp"]);
    expect(await db.select().from(logos).all()).toHaveLength(2);
  });

  it("with keepCompany, adds a logo to a known company and leaves its name, aliases, colour, prominence and search as they are", async () => {
    const first = await importCompanyLogo(db, env.LOGOS, await input(), async () => ok(await preparedFrom(blackPng)));
    if (!first.ok) throw new Error(first.error.message);
    const before = await db.select().from(companies).all();
    const guessed = {
      name: "Welcome to our homepage",
      ticker: undefined,
      aliases: [],
      brandColor: "#00ff00",
      prominence: 0,
      sourceSet: "discovered",
      keepCompany: true,
    };
    const result = await importCompanyLogo(db, env.LOGOS, await input({ ...guessed, domains: ["acme.com"] }, redPng), async () =>
      ok(await preparedFrom(redPng)),
    );
    expect(result.ok && result.value).toMatchObject({ outcome: "created", companyId: first.value.companyId });
    expect(await db.select().from(companies).all()).toEqual(before);
    expect(await db.select().from(logos).all()).toHaveLength(2);
    expect((await searchCompanies(db, "acme roc", 5)).map((hit) => hit.companyId)).toEqual([first.value.companyId]);
    expect(await searchCompanies(db, "welcome", 5)).toEqual([]);

    // A company the catalogue does not know yet is still made from the input.
    const created = await importCompanyLogo(db, env.LOGOS, await input({ ...guessed, domains: ["newco.com"] }, redPng), async () =>
      ok(await preparedFrom(redPng)),
    );
    if (!created.ok) throw new Error(created.error.message);
    expect(await db.query.companies.findFirst({ where: eq(companies.id, created.value.companyId) })).toMatchObject({
      name: "Welcome to our homepage",
      brandColor: "#00ff00",
    });
  });

  it("gives a company discovery made the catalogue's standing once imported, though the row names no prominence", async () => {
    const discovered = {
      name: "Initech",
      ticker: undefined,
      aliases: [],
      brandColor: undefined,
      prominence: DISCOVERED_PROMINENCE,
      sourceSet: "discovered",
      keepCompany: true,
    };
    const found = await importCompanyLogo(db, env.LOGOS, await input({ ...discovered, domains: ["initech.example"] }, redPng), async () =>
      ok(await preparedFrom(redPng)),
    );
    if (!found.ok) throw new Error(found.error.message);
    const rival = await importCompanyLogo(
      db,
      env.LOGOS,
      await input({ name: "Initech", domains: ["initech-other.example"], ticker: undefined, aliases: [], prominence: 0 }),
      async () => ok(await preparedFrom(blackPng)),
    );
    if (!rival.ok) throw new Error(rival.error.message);
    // A manifest row that leaves prominence out, as most do.
    const imported = await importCompanyLogo(
      db,
      env.LOGOS,
      await input({
        name: "Initech",
        domains: ["initech.example"],
        ticker: undefined,
        aliases: [],
        prominence: undefined,
        variant: "full",
      }),
      async () => ok(await preparedFrom(blackPng)),
    );
    expect(imported.ok && imported.value.companyId).toBe(found.value.companyId);
    expect((await db.query.companies.findFirst({ where: eq(companies.id, found.value.companyId) }))!.prominence).toBe(0);
    // Searched, it now stands with the catalogue's companies: by id, the older first among equals.
    expect((await searchCompanies(db, "initech", 5)).map((hit) => hit.companyId)).toEqual([found.value.companyId, rival.value.companyId]);
  });

  it("refuses a row whose domains belong to two companies, writing nothing", async () => {
    await importCompanyLogo(db, env.LOGOS, await input(), async () => ok(await preparedFrom(blackPng)));
    await importCompanyLogo(db, env.LOGOS, await input({ name: "Other", domains: ["other.com"], ticker: undefined }), async () =>
      ok(await preparedFrom(blackPng)),
    );
    const keys = await objectKeys();
    const result = await importCompanyLogo(db, env.LOGOS, await input({ domains: ["acme.com", "other.com"], variant: "full" }), async () =>
      ok(await preparedFrom(redPng)),
    );
    expect(result).toEqual(fail("conflict", "domains acme.com, other.com belong to different companies"));
    expect(await objectKeys()).toEqual(keys);
    expect(await db.select().from(logos).all()).toHaveLength(2);
  });

  it("refuses a ticker that another company holds", async () => {
    await importCompanyLogo(db, env.LOGOS, await input(), async () => ok(await preparedFrom(blackPng)));
    const result = await importCompanyLogo(db, env.LOGOS, await input({ name: "Copycat", domains: ["copycat.com"] }), async () =>
      ok(await preparedFrom(blackPng)),
    );
    expect(result).toEqual(fail("conflict", "ticker ACME already belongs to another company on NYSE"));
    expect(await db.select().from(companies).all()).toHaveLength(1);
  });

  it("passes an image failure through without writing the company", async () => {
    const result = await importCompanyLogo(db, env.LOGOS, await input(), async () => fail("invalid_argument", "unreadable image"));
    expect(result).toEqual(fail("invalid_argument", "unreadable image"));
    expect(await db.select().from(companies).all()).toEqual([]);
    expect(await objectKeys()).toEqual([]);
  });

  it("leaves no company and no object behind when the database write fails", async () => {
    // A zero width breaks the logos CHECK constraint, so the batch fails after the objects were put.
    const result = await importCompanyLogo(db, env.LOGOS, await input(), async () => ok(await preparedFrom(blackPng, { width: 0 })));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.code).toBe("internal");
    expect(await db.select().from(companies).all()).toEqual([]);
    expect(await db.select({ n: sql<number>`count(*)` }).from(companyDomains).get()).toEqual({ n: 0 });
    expect(await objectKeys()).toEqual([]);
  });

  /**
   * The bucket, with its `failing`-th put (from 1) refused and every other one slowed by
   * `delayMs`; `settled()` resolves once every put started has finished, those started while
   * waiting too.
   */
  const flakyBucket = (failing: number, delayMs = 0) => {
    let puts = 0;
    const pending = new Set<Promise<unknown>>();
    const bucket = new Proxy(env.LOGOS, {
      get: (target, name) => {
        if (name === "put") {
          return (...args: Parameters<R2Bucket["put"]>) => {
            const put = (async () => {
              if (++puts === failing) throw new Error("R2 put failed");
              await new Promise((resolve) => setTimeout(resolve, delayMs));
              return target.put(...args);
            })();
            pending.add(put);
            put.then(
              () => pending.delete(put),
              () => pending.delete(put),
            );
            return put;
          };
        }
        // The binding's own methods, called on the binding.
        const value = Reflect.get(target, name);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const settled = async () => {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    };
    return { bucket, settled, started: () => puts };
  };

  it("leaves no object behind when a put fails while others are under way", async () => {
    const flaky = flakyBucket(1, 30);
    const result = await importCompanyLogo(db, flaky.bucket, await input(), async () => ok(await preparedFrom(blackPng)));
    expect(result).toMatchObject({ ok: false, error: { message: expect.stringContaining("object storage write failed") } });
    expect(await db.select().from(companies).all()).toEqual([]);
    // Others were under way when the first failed; nothing lands after the answer either, once
    // every one of them has finished.
    expect(flaky.started()).toBeGreaterThan(1);
    await flaky.settled();
    expect(await objectKeys()).toEqual([]);
  });

  it("keeps a retired image's objects when a write bringing it back fails", async () => {
    const replacedAt = Date.now();
    await importCompanyLogo(db, env.LOGOS, await input(), async () => ok(await preparedFrom(blackPng)), new Date(replacedAt));
    const blackKeys = await objectKeys();
    await importCompanyLogo(db, env.LOGOS, await input({}, redPng), async () => ok(await red()), new Date(replacedAt));
    // Black back, its third object refused: the first two were put again over the retired ones.
    const back = await importCompanyLogo(
      db,
      flakyBucket(3).bucket,
      await input(),
      async () => ok(await preparedFrom(blackPng)),
      new Date(replacedAt + 3_600_000),
    );
    expect(back.ok).toBe(false);
    // Redirects cached before red replaced black still lead to every one of black's objects.
    expect(await objectKeys()).toEqual(expect.arrayContaining(blackKeys));
  });

  it("keeps the objects of a write that was applied although its answer was lost, so the logo is whole", async () => {
    // Over a remote connection D1 can apply a batch and the answer never arrive: here the
    // write's batch (the second, after the one that reads the catalogue).
    let batches = 0;
    const lost = new Proxy(db, {
      get: (target, name, receiver) =>
        name === "batch"
          ? async (statements: Parameters<typeof db.batch>[0]) => {
              const results = await target.batch(statements);
              if (++batches === 2) throw new Error("network connection lost");
              return results;
            }
          : Reflect.get(target, name, receiver),
    });
    const result = await importCompanyLogo(lost, env.LOGOS, await input(), async () => ok(await preparedFrom(blackPng)));
    expect(result.ok).toBe(false);
    const [row] = await db.select().from(logos).all();
    const logo = (await findLogo(db, row!.id))!.logo;
    expect(await objectKeys()).toEqual(logoObjectKeys(logo).sort());
    // The retry finds the rows as written and leaves them, objects included.
    const again = await importCompanyLogo(db, env.LOGOS, await input(), async () => ok(await preparedFrom(blackPng)));
    expect(again.ok && again.value.outcome).toBe("unchanged");
    expect(await objectKeys()).toEqual(logoObjectKeys(logo).sort());
  });

  it("deletes the new renditions of a failed write that only moved a logo to a newer renditions version", async () => {
    const older = { version: RENDITIONS_VERSION - 1, light: false, dark: true, plain: "master" as const, vector: false };
    await importCompanyLogo(db, env.LOGOS, await input(), async () => ok(await preparedFrom(blackPng, { renditions: older })));
    const before = await objectKeys();
    // The same file, prepared again by this version: same master, new rendition keys. The
    // write's batch (the second) fails without being applied.
    let batches = 0;
    const failing = new Proxy(db, {
      get: (target, name, receiver) =>
        name === "batch"
          ? async (statements: Parameters<typeof db.batch>[0]) => {
              if (++batches === 2) throw new Error("D1_ERROR: no such table: nowhere");
              return target.batch(statements);
            }
          : Reflect.get(target, name, receiver),
    });
    const result = await importCompanyLogo(failing, env.LOGOS, await input(), async () => ok(await preparedFrom(blackPng)));
    expect(result.ok).toBe(false);
    // The stored row, at the older version with the same content hash, names none of the new keys.
    expect(await objectKeys()).toEqual(before);
  });

  it.each([
    ["a source hash", { sourceHash: "Not-A-Digest" }, {}],
    ["a content hash in capitals", {}, { contentHash: "AB".repeat(32) }],
    ["a content hash one byte short", {}, { contentHash: "ab".repeat(31) }],
  ])("refuses %s that is not 64 lower-case hex digits, writing nothing", async (_, row, image) => {
    const result = await importCompanyLogo(db, env.LOGOS, await input(row), async () => ok(await preparedFrom(blackPng, image)));
    expect(result).toMatchObject({
      ok: false,
      error: { code: "internal", message: expect.stringContaining("SHA-256 column takes 64 lower-case hex digits") },
    });
    expect(await db.select().from(companies).all()).toEqual([]);
    expect(await objectKeys()).toEqual([]);
  });
});

describe("nameKey", () => {
  it("folds case, accents and punctuation", () => {
    expect(nameKey("Coca-Cola")).toBe("cocacola");
    expect(nameKey("Nestlé S.A.")).toBe("nestlesa");
    expect(nameKey("  AT&T ")).toBe("att");
  });
});
