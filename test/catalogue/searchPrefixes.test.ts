import { env } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { companies, searchPrefixes, searchPrefixLists } from "../../schema";
import type { CompanyLogoInput } from "../../src/catalogue/importLogo";
import { searchCompanies } from "../../src/catalogue/search";
import { SEARCH_PREFIX_LIST_SIZE, searchPrefixesOf } from "../../src/catalogue/searchPrefixes";
import { blackPng, preparedFrom } from "../fixtures/images";
import { addCompany, db } from "../helpers/catalogue";

const add = async (name: string, domains: string[], extra: Partial<CompanyLogoInput> = {}): Promise<number> =>
  (await addCompany({ name, domains, ...extra }, await preparedFrom(blackPng))).companyId;

/** The companies on a list, best first, as search reads them. */
async function list(kind: "name" | "word", prefix: string): Promise<number[]> {
  const rows = await db
    .select()
    .from(searchPrefixes)
    .where(and(eq(searchPrefixes.kind, kind), eq(searchPrefixes.prefix, prefix)))
    .all();
  return rows.sort((a, b) => b.prominence - a.prominence || a.companyId - b.companyId).map((row) => row.companyId);
}

async function listState(kind: "name" | "word", prefix: string) {
  const row = (await db.select().from(searchPrefixLists).all()).find((l) => l.kind === kind && l.prefix === prefix);
  return row ? { size: row.size, floor: row.floorCompanyId === null ? null : [row.floorProminence, row.floorCompanyId] } : null;
}

const names = async (query: string, limit = 5) => (await searchCompanies(db, query, limit)).map((hit) => hit.companyName);

describe("searchPrefixesOf", () => {
  it("lists the name key's first one to three characters and those of every indexed word", () => {
    const entries = searchPrefixesOf({ nameKey: "cocacola", name: "Coca-Cola", aliases: ["Coke"], tickers: ["KO"] });
    expect([...entries].filter((e) => e.startsWith("name:")).sort()).toEqual(["name:c", "name:co", "name:coc"]);
    expect([...entries].filter((e) => e.startsWith("word:")).sort()).toEqual([
      "word:c",
      "word:co",
      "word:coc",
      "word:cok",
      "word:col",
      "word:k",
      "word:ko",
    ]);
    // Accents folded as the full-text index folds them; characters, not bytes.
    const accented = searchPrefixesOf({ nameKey: "zürich", name: "Zürich", aliases: [], tickers: [] });
    expect([...accented]).toContain("word:zur");
    expect([...accented]).toContain("name:zür");
  });
});

describe("the prefix lists, kept by the import's write path", () => {
  it("puts an imported company on the lists of its name, aliases and ticker, in the same write", async () => {
    const id = await add("Quokka Foods", ["quokkafoods.com", "qf.io"], {
      aliases: ["Marsupial Eats"],
      ticker: { symbol: "QKF", exchange: "NYSE" },
    });
    for (const prefix of ["q", "qu", "quo"]) expect(await list("name", prefix)).toEqual([id]);
    for (const prefix of ["quo", "foo", "mar", "eat", "qkf"]) expect(await list("word", prefix)).toEqual([id]);
    expect(await list("name", "foo")).toEqual([]);
    expect(await listState("word", "qkf")).toEqual({ size: 1, floor: null });
    // Domains are not words: their labels ("com", "io") would make every company a match.
    for (const prefix of ["qf", "io", "com"]) expect(await list("word", prefix)).toEqual([]);
    // Search reads the lists: a short prefix of any of its words finds it, and the start of
    // a domain finds it through the domain index.
    for (const query of ["q", "quo", "ea", "QKF", "qf", "qf.i"]) expect(await names(query)).toContain("Quokka Foods");
    expect(await names("io")).toEqual([]);
  });

  it("moves a renamed company to the lists of its new name and off those of its old one", async () => {
    const id = await add("Quokka Foods", ["quokkafoods.com"], { ticker: { symbol: "QKF", exchange: "NYSE" } });
    await add("Wombat Kitchens", ["quokkafoods.com"]);
    expect(await db.select({ name: companies.name }).from(companies).all()).toEqual([{ name: "Wombat Kitchens" }]);
    for (const prefix of ["w", "wo", "wom"]) expect(await list("name", prefix)).toEqual([id]);
    for (const prefix of ["q", "qu", "quo"]) expect(await list("name", prefix)).toEqual([]);
    expect(await list("word", "foo")).toEqual([]);
    // Still found by what it kept: its ticker from the lists, its domain from the domain index.
    expect(await list("word", "quo")).toEqual([]);
    expect(await list("word", "qkf")).toEqual([id]);
    expect(await names("quo")).toEqual(["Wombat Kitchens"]);
    expect(await listState("name", "quo")).toEqual({ size: 0, floor: null });
    expect(await names("wo")).toEqual(["Wombat Kitchens"]);
    expect(await names("fo")).toEqual([]);
  });

  it("takes a removed company off every list", async () => {
    const id = await add("Quokka Foods", ["quokkafoods.com"], { aliases: ["QF"] });
    const other = await add("Quoll Freight", ["quollfreight.com"]);
    expect(await list("name", "quo")).toEqual([id, other]);
    await db.delete(companies).where(eq(companies.id, id));
    expect(await db.select().from(searchPrefixes).where(eq(searchPrefixes.companyId, id)).all()).toEqual([]);
    expect(await list("name", "quo")).toEqual([other]);
    expect(await listState("name", "quo")).toEqual({ size: 1, floor: null });
    expect(await names("qu")).toEqual(["Quoll Freight"]);
  });

  // Seventy imports in sequence: on a busy machine, more than the default 5 s.
  it("keeps the best-known companies of a crowded prefix: a full list gives up its last, and its floor keeps lesser ones out", async () => {
    const K = SEARCH_PREFIX_LIST_SIZE;
    const ids: number[] = [];
    // K + 1 companies on the name list "zyx", prominence 1 each except the last, at 0.
    for (let i = 0; i <= K; i++) ids.push(await add(`Zyx ${i}`, [`zyx${i}.example`], { prominence: i === K ? 0 : 1 }));
    expect(await list("name", "zyx")).toEqual(ids.slice(0, K));
    expect(await listState("name", "zyx")).toEqual({ size: K, floor: [0, ids[K]] });

    // Better known than the floor: joins, and the list's last leaves, raising the floor.
    const famous = await add("Zyx Famous", ["zyxfamous.example"], { prominence: 5 });
    expect(await list("name", "zyx")).toEqual([famous, ...ids.slice(0, K - 1)]);
    expect(await listState("name", "zyx")).toEqual({ size: K, floor: [1, ids[K - 1]] });

    // Below the floor: stays off, although the list has room once a member is renamed away.
    await add("Elsewhere Inc", ["zyx0.example"], { prominence: 1 });
    expect(await listState("name", "zyx")).toEqual({ size: K - 1, floor: [1, ids[K - 1]] });
    const obscure = await add("Zyx Obscure", ["zyxobscure.example"], { prominence: 0 });
    expect(await list("name", "zyx")).not.toContain(obscure);
    // So the list is always exactly the companies of its prefix above its floor: its head is
    // the exact ranking.
    expect(await names("zyx", 3)).toEqual(["Zyx Famous", "Zyx 1", "Zyx 2"]);

    // A change of prominence moves a company: up onto the list, or down off it.
    await add("Zyx Obscure", ["zyxobscure.example"], { prominence: 7 });
    expect((await list("name", "zyx"))[0]).toBe(obscure);
    await add("Zyx Famous", ["zyxfamous.example"], { prominence: 0 });
    expect(await list("name", "zyx")).not.toContain(famous);
    expect(await names("zyx", 2)).toEqual(["Zyx Obscure", "Zyx 1"]);
  }, 30_000);

  // 130 imports in sequence.
  it("fills a list with a floor again from the companies of its prefix once enough have left it", async () => {
    const K = SEARCH_PREFIX_LIST_SIZE;
    const ids: number[] = [];
    for (let i = 0; i < K + 2; i++) ids.push(await add(`Zyx ${i}`, [`company${i}.example`], { prominence: 1 }));
    expect(await listState("name", "zyx")).toEqual({ size: K, floor: [1, ids[K]] });
    for (let i = 0; i < K; i++) await add(`Elsewhere ${i}`, [`company${i}.example`], { prominence: 1 });
    for (const query of ["z", "zy", "zyx"]) expect(await names(query), query).toEqual([`Zyx ${K}`, `Zyx ${K + 1}`]);
    for (const kind of ["name", "word"] as const) {
      expect(await list(kind, "zyx")).toEqual(ids.slice(K));
      expect(await listState(kind, "zyx")).toEqual({ size: 2, floor: null });
    }
  }, 60_000);

  it("fills a list again with the best known of its prefix, and the best it leaves out as its floor", async () => {
    const K = SEARCH_PREFIX_LIST_SIZE;
    const ids: number[] = [];
    for (let i = 0; i < K + 1; i++) ids.push(await add(`Qor ${i}`, [`qor${i}.example`], { prominence: 100 + i }));
    // Forty lesser companies of the prefix, below the list's floor: as the write path leaves
    // them, off the list.
    await env.DB.prepare(
      `INSERT INTO companies (id, name, name_key, prominence, created_at, updated_at)
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40) SELECT 1000 + i, 'Qor low ' || i, 'qorlow' || i, i, 0, 0 FROM n`,
    ).run();
    expect(await listState("name", "qor")).toEqual({ size: K, floor: [100, ids[0]] });
    // Half the list and one more leave: the one it left out comes back, then the best of the rest.
    for (let i = K; i >= K / 2; i--) await add(`Elsewhere ${i}`, [`qor${i}.example`], { prominence: 100 + i });
    const lesser = Array.from({ length: 40 }, (_, i) => 1040 - i);
    const rest = [...ids.slice(0, K / 2).reverse(), ...lesser];
    expect(await list("name", "qor")).toEqual(rest.slice(0, K));
    expect(await listState("name", "qor")).toEqual({ size: K, floor: [40 - (K - K / 2), rest[K]] });
  }, 60_000);

  it("replaces entries it did not write, and keeps those already there, instead of failing the company's write", async () => {
    const id = await add("Reliance", ["ril.com"], { aliases: ["रिलायंस"] });
    // Entries as lists built from another fold hold them: the full-text index of migrations
    // 0009 and 0011 split रिलायंस at its vowel signs, into र, ल, य and स.
    await env.DB.prepare(
      "INSERT INTO search_prefixes (kind, prefix, company_id, prominence) VALUES ('word', 'ल', ?1, 0), ('word', 'स', ?1, 0)",
    )
      .bind(id)
      .run();
    await add("Reliance", ["ril.com"], { aliases: ["रिलायंस", "लाभ"] });
    const entries = (await db.select().from(searchPrefixes).where(eq(searchPrefixes.companyId, id)).all()).map(
      (e) => `${e.kind}:${e.prefix}`,
    );
    expect(entries.sort()).toEqual(
      [...searchPrefixesOf({ nameKey: "reliance", name: "Reliance", aliases: ["रिलायंस", "लाभ"], tickers: [] })].sort(),
    );
    expect(await listState("word", "स")).toEqual({ size: 0, floor: null });
    expect(await listState("word", "ल")).toEqual({ size: 1, floor: null });
    expect(await names("लाभ")).toEqual(["Reliance"]);
  });

  it("agrees with the lists the migration builds from the full-text index", async () => {
    await add("Quokka Foods", ["quokkafoods.com", "qf.io"], {
      aliases: ["Marsupial Eats"],
      ticker: { symbol: "QKF", exchange: "NYSE" },
      prominence: 2,
    });
    await add("Quoll Freight", ["quollfreight.co.uk"], { aliases: ["QF"] });
    await add("Nestlé", ["nestle.com"], { prominence: 4 });
    await add("Wombat Kitchens", ["quokkafoods.com"]);
    await add("Türkiye İş Bankası", ["isbank.com.tr"], { aliases: ["İşbank"] });
    await add("Nippon Paint", ["nipponpaint.com"], { aliases: ["日本ペイント", "デンソー"] });
    await add("Reliance Industries", ["ril.com"], { aliases: ["रिलायंस इंडस्ट्रीज"] });
    await add("삼성전자", ["samsung.com"], { aliases: ["Ｓａｍｓｕｎｇ", "Łódź ﬁnance"] });
    const snapshot = async () => ({
      entries: (await db.select().from(searchPrefixes).all()).map((e) => `${e.kind}:${e.prefix}:${e.companyId}:${e.prominence}`).sort(),
      lists: (await db.select().from(searchPrefixLists).all())
        .filter((l) => l.size > 0)
        .map((l) => `${l.kind}:${l.prefix}:${l.size}`)
        .sort(),
    });
    const kept = await snapshot();

    const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0012_"))!;
    const rebuild = migration.queries.filter((q) => /search_prefix_staging/.test(q));
    expect(rebuild.length).toBeGreaterThan(0);
    await env.DB.batch([
      env.DB.prepare("DELETE FROM search_prefixes"),
      env.DB.prepare("DELETE FROM search_prefix_lists"),
      ...rebuild.map((q) => env.DB.prepare(q)),
    ]);
    expect(await snapshot()).toEqual(kept);
  });
});
