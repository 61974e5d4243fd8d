import { applyD1Migrations, reset } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { storedSourceHashes } from "../../src/catalogue/importLogo";
import { findLogo, logosInIdOrder } from "../../src/catalogue/logos";
import { logoObjectKeys } from "../../src/images/objectKeys";
import { RENDITIONS_VERSION } from "../../src/images/renditions";
import { sha256Hex } from "../../src/lib/encoding";
import { blackPng, darkLogo40x20, redPng } from "../fixtures/images";
import { addCompany, db } from "../helpers/catalogue";
import { assetKeyOf, BASE, freshKey } from "../lookup/helpers";

/**
 * migrations/0010 on a catalogue written before it: logo rows that stored their R2 keys and
 * their hashes as hex. Every logo must read back the same keys and hashes from the derivation,
 * and a row whose stored keys the derivation would not give must stop the migration whole.
 */
const DERIVED_KEYS = "0010_derived_logo_keys.sql";
const before0010 = env.TEST_MIGRATIONS.slice(
  0,
  env.TEST_MIGRATIONS.findIndex((m) => m.name === DERIVED_KEYS),
);

// The setup file has applied every migration: start again from the catalogue as it was before.
beforeEach(async () => {
  await reset();
  await applyD1Migrations(env.DB, before0010);
});

interface OldLogo {
  id: number;
  companyId: number;
  variant: "icon" | "full";
  format: string;
  sourceSet: string;
  sourceHash: string;
  contentHash: string;
  masterKey: string;
  originalKey: string;
  renditions: object;
  sourceUrl: string | null;
  fetchedAt: number | null;
}

/** A company, its domains (primary first) and its logos, as the write path before 0010 stored them. */
async function writeTheOldWay(
  companyId: number,
  domains: string[],
  logos: Array<Omit<OldLogo, "companyId" | "masterKey" | "originalKey"> & Partial<OldLogo>>,
) {
  const statements = [
    env.DB.prepare(
      "INSERT INTO companies (id, name, name_key, prominence, created_at, updated_at) VALUES (?1, ?2, ?2, 1, 1000, 1000)",
    ).bind(companyId, `company${companyId}`),
    ...domains.map((domain, index) =>
      env.DB.prepare("INSERT INTO company_domains (domain, company_id, is_primary) VALUES (?1, ?2, ?3)").bind(
        domain,
        companyId,
        index === 0 ? 1 : 0,
      ),
    ),
  ];
  const written: OldLogo[] = [];
  for (const logo of logos) {
    const stem = `logos/${domains[0]}/${logo.variant}.${logo.sourceSet}.${logo.contentHash.slice(0, 16)}`;
    const row = { masterKey: `${stem}.png`, originalKey: `${stem}.original.${logo.format}`, companyId, ...logo };
    written.push(row);
    statements.push(
      env.DB.prepare(
        `INSERT INTO logos (id, company_id, variant, format, original_key, master_key, renditions, width, height, bytes, source_hash, content_hash, tone,
           source_set, licence, source_url, fetched_at, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 4, 2, 70, ?8, ?9, 'dark', ?10, 'CC0-1.0', ?11, ?12, 1000, 2000)`,
      ).bind(
        row.id,
        companyId,
        row.variant,
        row.format,
        row.originalKey,
        row.masterKey,
        JSON.stringify(row.renditions),
        row.sourceHash,
        row.contentHash,
        row.sourceSet,
        row.sourceUrl,
        row.fetchedAt,
      ),
    );
  }
  await env.DB.batch(statements);
  return written;
}

const current = { version: RENDITIONS_VERSION, light: false, dark: false, plain: "master", vector: false };

async function oldCatalogue() {
  const [black, red] = [await sha256Hex(blackPng), await sha256Hex(redPng)];
  const domain = `acme-${crypto.randomUUID().slice(0, 8)}.com`;
  const logos = [
    ...(await writeTheOldWay(
      1,
      [domain, "acme-alias.io"],
      [
        {
          id: 3,
          variant: "icon",
          format: "svg",
          sourceSet: "simple-icons",
          sourceHash: await sha256Hex("<svg/>"),
          contentHash: black,
          renditions: { ...current, vector: true },
          sourceUrl: null,
          fetchedAt: null,
        },
        {
          id: 4,
          variant: "full",
          format: "png",
          sourceSet: "manifest",
          sourceHash: red,
          contentHash: red,
          renditions: { version: 0, light: false, dark: false, plain: "master", vector: false },
          sourceUrl: null,
          fetchedAt: null,
        },
      ],
    )),
    ...(await writeTheOldWay(
      2,
      ["beta.example"],
      [
        {
          id: 7,
          variant: "icon",
          format: "png",
          sourceSet: "discovered",
          sourceHash: black,
          contentHash: black,
          renditions: current,
          sourceUrl: "https://beta.example/icon.png",
          fetchedAt: 1500,
        },
      ],
    )),
  ];
  // The highest id given so far belonged to a logo removed since.
  await writeTheOldWay(
    3,
    ["gone.example"],
    [
      {
        id: 9,
        variant: "icon",
        format: "png",
        sourceSet: "manifest",
        sourceHash: red,
        contentHash: red,
        renditions: current,
        sourceUrl: null,
        fetchedAt: null,
      },
    ],
  );
  await env.DB.prepare("DELETE FROM companies WHERE id = 3").run();
  return { domain, logos };
}

const appliedMigrations = async () =>
  (await env.DB.prepare("SELECT name FROM d1_migrations ORDER BY id").all<{ name: string }>()).results.map((row) => row.name);
const storedLogoRows = async () => (await env.DB.prepare("SELECT * FROM logos ORDER BY id").all()).results;

describe("migrations/0010 on logos written before it", () => {
  it("keeps every logo, which reads back the keys and hashes it stored, and the highest id given", async () => {
    const { domain, logos } = await oldCatalogue();
    for (const logo of logos) await env.LOGOS.put(logo.masterKey, logo.contentHash === (await sha256Hex(redPng)) ? redPng : blackPng);

    await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

    expect(await appliedMigrations()).toContain(DERIVED_KEYS);
    const columns = (await env.DB.prepare("SELECT name FROM pragma_table_info('logos')").all<{ name: string }>()).results.map(
      (row) => row.name,
    );
    expect(columns).not.toContain("master_key");
    expect(columns).not.toContain("original_key");
    expect(
      await env.DB.prepare(
        "SELECT DISTINCT typeof(source_hash) AS s, typeof(content_hash) AS c, length(content_hash) AS n FROM logos",
      ).all(),
    ).toMatchObject({ results: [{ s: "blob", c: "blob", n: 32 }] });

    for (const old of logos) {
      const found = await findLogo(db, old.id);
      expect(found?.logo).toMatchObject({
        companyId: old.companyId,
        variant: old.variant,
        format: old.format,
        sourceSet: old.sourceSet,
        masterKey: old.masterKey,
        originalKey: old.originalKey,
        sourceHash: old.sourceHash,
        contentHash: old.contentHash,
        renditions: old.renditions,
        sourceUrl: old.sourceUrl,
        fetchedAt: old.fetchedAt === null ? null : new Date(old.fetchedAt),
        width: 4,
        height: 2,
        bytes: 70,
        licence: "CC0-1.0",
        createdAt: new Date(1000),
        updatedAt: new Date(2000),
      });
    }
    // Every reader derives the same: the walk over all logos, and the import's skip check.
    const walked = await logosInIdOrder(db);
    expect(walked.map((logo) => [logo.id, logo.masterKey, logo.originalKey])).toEqual(
      logos.map((logo) => [logo.id, logo.masterKey, logo.originalKey]),
    );
    expect(walked.flatMap((logo) => logoObjectKeys(logo))).toContain(`${logos[0]!.masterKey.slice(0, -4)}.v${RENDITIONS_VERSION}.svg`);
    expect(await storedSourceHashes(db, [{ domains: ["acme-alias.io"], variant: "icon", sourceSet: "simple-icons" }])).toEqual([
      logos[0]!.sourceHash,
    ]);
    // One of an older renditions version is converted again, as if its file had changed.
    expect(await storedSourceHashes(db, [{ domains: ["acme-alias.io"], variant: "full", sourceSet: "manifest" }])).toEqual([null]);

    // A lookup is answered with the object stored under the old key.
    const redirect = await exports.default.fetch(`${BASE}/${domain}?token=${await freshKey()}`, { redirect: "manual" });
    expect(assetKeyOf(redirect.headers.get("location")!)).toBe(logos[0]!.masterKey);
    const asset = await exports.default.fetch(new URL(redirect.headers.get("location")!, BASE));
    expect(asset.status).toBe(200);
    expect(asset.headers.get("etag")).toContain((await env.LOGOS.head(logos[0]!.masterKey))!.etag);

    // Ids go on from the highest ever given, not the highest left.
    const { logoId } = await addCompany({ name: "After", domains: ["after.example"] }, darkLogo40x20());
    expect(logoId).toBe(10);
  });

  it.each([
    [
      "a master key under another domain",
      "UPDATE logos SET master_key = replace(master_key, 'logos/acme-', 'logos/old-acme-') WHERE id = 3",
    ],
    [
      "an original key of another format",
      "UPDATE logos SET original_key = replace(original_key, '.original.svg', '.original.png') WHERE id = 3",
    ],
    ["a content hash in capitals", "UPDATE logos SET content_hash = upper(content_hash) WHERE id = 4"],
    ["a source hash that is not a SHA-256", "UPDATE logos SET source_hash = 'manifest-row-7' WHERE id = 7"],
  ])("fails on %s and applies nothing", async (_, damage) => {
    await oldCatalogue();
    await env.DB.prepare(damage).run();
    const before = await storedLogoRows();

    await expect(applyD1Migrations(env.DB, env.TEST_MIGRATIONS)).rejects.toThrow(/logos_stored_keys_match_derivation/);

    expect(await appliedMigrations()).not.toContain(DERIVED_KEYS);
    expect(await storedLogoRows()).toEqual(before);
    expect((await env.DB.prepare("SELECT name FROM sqlite_master WHERE name LIKE '%logos%' ORDER BY name").all()).results).toEqual([
      { name: "logos" },
      { name: "logos_company_variant_source_idx" },
    ]);
  });
});
