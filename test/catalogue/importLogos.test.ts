import { env } from "cloudflare:workers";
import fc from "fast-check";
import { asc } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { companies, companyDomains, companyTickers, logos, retiredObjects } from "../../schema";
import {
  type CompanyLogoInput,
  importCompanyLogo,
  importCompanyLogos,
  type LogoImport,
  type PreparedImage,
  storedSourceHashes,
} from "../../src/catalogue/importLogo";
import { logosInIdOrder } from "../../src/catalogue/logos";
import { logoObjectKeys } from "../../src/images/objectKeys";
import { RENDITIONS_VERSION } from "../../src/images/renditions";
import { createDb } from "../../src/lib/db";
import { fail, ok } from "../../src/lib/errors";
import { sha256Hex } from "../../src/lib/encoding";
import { blackPng, preparedFrom, redPng } from "../fixtures/images";
import { emptyStorage } from "../helpers/storage";

/**
 * importCompanyLogos writes many inputs in one batch; whatever the inputs, the catalogue it
 * leaves (rows, ids, search index and prefix lists, objects) and the results it gives must be
 * those of importCompanyLogo called on each input in turn.
 */
const db = createDb(env.DB);
const now = new Date("2026-11-01T00:00:00Z");

/**
 * The catalogue as lookups see it. Retired objects (of images a write replaced, kept two days)
 * are left out: an image replaced twice within one batch is never put, so never retired, while
 * one at a time puts and retires it. None of them is one a row names.
 */
async function snapshot() {
  const retired = new Set((await db.select().from(retiredObjects).all()).map((r) => r.key));
  const referenced = (await logosInIdOrder(db)).flatMap((l) => logoObjectKeys(l));
  expect(referenced.filter((key) => retired.has(key))).toEqual([]);
  const objects = await env.LOGOS.list({ prefix: "logos/", include: ["httpMetadata", "customMetadata"] });
  return {
    companies: await db.select().from(companies).orderBy(asc(companies.id)).all(),
    domains: await db.select().from(companyDomains).orderBy(asc(companyDomains.domain)).all(),
    tickers: await db.select().from(companyTickers).orderBy(asc(companyTickers.ticker), asc(companyTickers.exchange)).all(),
    logos: await db.select().from(logos).orderBy(asc(logos.id)).all(),
    search: (await env.DB.prepare("SELECT rowid FROM catalogue_search ORDER BY rowid").all()).results,
    prefixes: (await env.DB.prepare("SELECT * FROM search_prefixes ORDER BY kind, prefix, company_id").all()).results,
    prefixLists: (await env.DB.prepare("SELECT * FROM search_prefix_lists ORDER BY kind, prefix").all()).results,
    objects: await Promise.all(
      objects.objects
        .filter((o) => !retired.has(o.key))
        .map(async (o) => ({
          key: o.key,
          contentType: o.httpMetadata?.contentType,
          customMetadata: o.customMetadata,
          body: await sha256Hex(new Uint8Array(await (await env.LOGOS.get(o.key))!.arrayBuffer())),
        })),
    ),
  };
}

// Three images with distinct contents, so that a change of image changes the object keys.
const images: Array<Promise<PreparedImage>> = [
  preparedFrom(blackPng),
  preparedFrom(redPng, {
    tone: "mixed",
    files: { master: redPng, grey: redPng },
    renditions: { version: RENDITIONS_VERSION, light: false, dark: false, plain: "master", vector: false },
  }),
  preparedFrom(blackPng, { original: redPng, contentHash: "ab".repeat(32), width: 8, height: 4 }),
];
// Stand-ins for the SHA-256 of each image's file (64 hex digits, as the column takes).
const sourceHashes = ["b1ac", "2ed0", "a1de"].map((head) => head.padEnd(64, "0"));

interface Step {
  name: string;
  domains: string[];
  ticker: string | null;
  aliases: string[];
  brandColor: string | null;
  prominence: number;
  variant: "full" | "icon";
  sourceSet: string;
  licence: string;
  image: number;
  /** The image cannot be prepared. */
  broken: boolean;
}

function imports(steps: Step[]): LogoImport[] {
  return steps.map((step) => ({
    input: {
      name: step.name,
      domains: step.domains,
      ticker: step.ticker ? { symbol: step.ticker, exchange: "NYSE" } : undefined,
      aliases: step.aliases,
      brandColor: step.brandColor ?? undefined,
      prominence: step.prominence,
      variant: step.variant,
      sourceSet: step.sourceSet,
      licence: step.licence,
      sourceHash: sourceHashes[step.image]!,
    } satisfies CompanyLogoInput,
    image: async () => (step.broken ? fail("invalid_argument", "unreadable image") : ok(await images[step.image]!)),
  }));
}

// A small world, so that inputs collide: shared domains, tickers, logos, renames.
const step: fc.Arbitrary<Step> = fc.record({
  name: fc.constantFrom("Acme", "Acme Inc", "Beta", "Gamma"),
  domains: fc.uniqueArray(fc.constantFrom("acme.com", "acme.io", "beta.org", "gamma.dev", "gamma.io", "delta.net"), {
    minLength: 1,
    maxLength: 3,
  }),
  ticker: fc.constantFrom(null, null, "ACME", "BETA"),
  aliases: fc.uniqueArray(fc.constantFrom("Acme", "ACME Corp", "B", "G"), { maxLength: 2 }),
  brandColor: fc.constantFrom(null, "#ff0000", "#00ff00"),
  prominence: fc.constantFrom(0, 5),
  variant: fc.constantFrom("full" as const, "icon" as const),
  sourceSet: fc.constantFrom("a", "b"),
  licence: fc.constantFrom("CC0-1.0", "MIT"),
  image: fc.nat(2),
  broken: fc.constantFrom(false, false, false, true),
});

describe("importCompanyLogos", () => {
  it("leaves the catalogue and gives the results that importing each input alone would", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 4 }),
        fc.array(step, { minLength: 1, maxLength: 12 }),
        async (before, steps) => {
          // The same catalogue to start from, written one input at a time.
          await emptyStorage();
          for (const item of imports(before)) await importCompanyLogo(db, env.LOGOS, item.input, item.image, now);
          const alone: unknown[] = [];
          for (const item of imports(steps)) alone.push(await importCompanyLogo(db, env.LOGOS, item.input, item.image, now));
          const expected = await snapshot();

          await emptyStorage();
          for (const item of imports(before)) await importCompanyLogo(db, env.LOGOS, item.input, item.image, now);
          const together = await importCompanyLogos(db, env.LOGOS, imports(steps), now);
          expect(together).toEqual(alone);
          expect(await snapshot()).toEqual(expected);
        },
      ),
      { numRuns: 25, seed: 20261101 },
    );
  }, 60_000);

  it("writes a new company with two logos and a second company in one batch", async () => {
    const [acme, beta] = [await images[0]!, await images[1]!];
    const results = await importCompanyLogos(
      db,
      env.LOGOS,
      imports([
        {
          name: "Acme",
          domains: ["acme.com"],
          ticker: "ACME",
          aliases: [],
          brandColor: null,
          prominence: 1,
          variant: "icon",
          sourceSet: "a",
          licence: "MIT",
          image: 0,
          broken: false,
        },
        {
          name: "Beta",
          domains: ["beta.org"],
          ticker: null,
          aliases: [],
          brandColor: null,
          prominence: 0,
          variant: "icon",
          sourceSet: "a",
          licence: "MIT",
          image: 1,
          broken: false,
        },
        {
          name: "Acme",
          domains: ["acme.io", "acme.com"],
          ticker: "ACME",
          aliases: ["ACME Corp"],
          brandColor: null,
          prominence: 1,
          variant: "full",
          sourceSet: "a",
          licence: "MIT",
          image: 1,
          broken: false,
        },
      ]),
      now,
    );
    expect(results.map((r) => r.ok && r.value.outcome)).toEqual(["created", "created", "created"]);
    const [first, second, third] = results.map((r) => (r.ok ? r.value : null));
    expect(third!.companyId).toBe(first!.companyId);
    expect(new Set([first!.logoId, second!.logoId, third!.logoId]).size).toBe(3);
    const domains = await db.select().from(companyDomains).orderBy(asc(companyDomains.domain)).all();
    expect(domains).toEqual([
      { domain: "acme.com", companyId: first!.companyId, isPrimary: true },
      { domain: "acme.io", companyId: first!.companyId, isPrimary: false },
      { domain: "beta.org", companyId: second!.companyId, isPrimary: true },
    ]);
    // Both of Acme's logos live under its primary domain.
    const keys = (await env.LOGOS.list({ prefix: "logos/acme.com/" })).objects.map((o) => o.key);
    expect(keys.filter((k) => k.includes(acme.contentHash.slice(0, 16)))).toHaveLength(5);
    expect(keys.filter((k) => k.includes(beta.contentHash.slice(0, 16)))).toHaveLength(3);
  });

  it("falls back to one input at a time when the batch fails, so only the bad input fails", async () => {
    const good = imports([
      {
        name: "Acme",
        domains: ["acme.com"],
        ticker: null,
        aliases: [],
        brandColor: null,
        prominence: 0,
        variant: "icon",
        sourceSet: "a",
        licence: "MIT",
        image: 0,
        broken: false,
      },
    ])[0]!;
    // A zero width breaks the logos CHECK constraint when the batch runs.
    const bad: LogoImport = {
      input: { ...good.input, name: "Beta", domains: ["beta.org"] },
      image: async () => ok(await preparedFrom(redPng, { width: 0 })),
    };
    const results = await importCompanyLogos(db, env.LOGOS, [good, bad], now);
    expect(results[0]).toMatchObject({ ok: true, value: { outcome: "created" } });
    expect(results[1]).toMatchObject({ ok: false, error: { code: "internal" } });
    expect((await db.select().from(companies).all()).map((c) => c.name)).toEqual(["Acme"]);
    const referenced = (await logosInIdOrder(db)).flatMap((l) => logoObjectKeys(l));
    expect((await env.LOGOS.list({ prefix: "logos/" })).objects.map((o) => o.key).sort()).toEqual(referenced.filter(Boolean).sort());
  });

  it("tells the stored source hash of many logos in one query, in input order", async () => {
    await importCompanyLogos(
      db,
      env.LOGOS,
      imports([
        {
          name: "Acme",
          domains: ["acme.com", "acme.io"],
          ticker: null,
          aliases: [],
          brandColor: null,
          prominence: 0,
          variant: "icon",
          sourceSet: "a",
          licence: "MIT",
          image: 0,
          broken: false,
        },
      ]),
      now,
    );
    expect(
      await storedSourceHashes(db, [
        { domains: ["nobody.com"], variant: "icon", sourceSet: "a" },
        { domains: ["nobody.com", "acme.io"], variant: "icon", sourceSet: "a" },
        { domains: ["acme.com"], variant: "full", sourceSet: "a" },
        { domains: ["acme.com"], variant: "icon", sourceSet: "b" },
      ]),
    ).toEqual([null, sourceHashes[0], null, null]);
  });
});
