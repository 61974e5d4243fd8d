import { applyD1Migrations, reset } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { findCompanyByName, searchCompanies } from "../../src/catalogue/search";
import { SEARCH_PREFIX_LIST_SIZE, searchPrefixesOf } from "../../src/catalogue/searchPrefixes";
import { blackPng, preparedFrom } from "../fixtures/images";
import { addCompany, db } from "../helpers/catalogue";

/**
 * migrations/0012 on a catalogue written before it: name keys of the old fold (NFKD, lower case,
 * letters and digits), the full-text index folding with its tokenizer, and prefix lists built
 * from that index's words as 0009 and 0011 built them, beside entries of the old code's fold.
 * Afterwards the index, the name keys and the lists are the code's fold, and the code's upkeep
 * of a company works on them.
 */
const migrations = env.TEST_MIGRATIONS;
const at = migrations.findIndex((m) => m.name.startsWith("0012_"));

beforeEach(async () => {
  await reset();
  await applyD1Migrations(env.DB, migrations.slice(0, at));
});

const oldNameKey = (name: string) =>
  name
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "");

interface OldCompany {
  id: number;
  name: string;
  aliases?: string[];
  prominence?: number;
  ticker?: string;
}

const catalogue: OldCompany[] = [
  { id: 1, name: "Denso", aliases: ["デンソー"], prominence: 2 },
  { id: 2, name: "Nippon Paint", aliases: ["日本ペイント"] },
  { id: 3, name: "Reliance Industries", aliases: ["रिलायंस इंडस्ट्रीज"], ticker: "RELI" },
  { id: 4, name: "Samsung Electronics", aliases: ["삼성전자"], prominence: 5 },
  { id: 5, name: "Türkiye İş Bankası" },
  { id: 6, name: "YAPI KREDİ" },
  { id: 7, name: "Łódź Holdings", aliases: ["ＬＯＤＺ ﬁnance"] },
  { id: 8, name: "Quokka Foods", ticker: "QKF" },
  ...Array.from({ length: SEARCH_PREFIX_LIST_SIZE + 2 }, (_, i) => ({ id: 10 + i, name: `Zeta ${i}`, prominence: i % 5 })),
];

async function oldCatalogue() {
  await env.DB.batch(
    catalogue.flatMap((c) => [
      env.DB.prepare(
        "INSERT INTO companies (id, name, name_key, aliases, prominence, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, 0, 0)",
      ).bind(c.id, c.name, oldNameKey(c.name), JSON.stringify(c.aliases ?? []), c.prominence ?? 0),
      env.DB.prepare("INSERT INTO company_domains (domain, company_id, is_primary) VALUES (?1, ?2, 1)").bind(
        `company${c.id}.example`,
        c.id,
      ),
      ...(c.ticker
        ? [env.DB.prepare("INSERT INTO company_tickers (ticker, exchange, company_id) VALUES (?1, 'NYSE', ?2)").bind(c.ticker, c.id)]
        : []),
    ]),
  );
  const lists = migrations.find((m) => m.name.startsWith("0009_"))!.queries.filter((q) => /search_prefix_staging/.test(q));
  await env.DB.batch(lists.map((q) => env.DB.prepare(q)));
  // And entries the old code wrote: Hangul as jamo, and kana without its voicing marks.
  await env.DB.prepare(
    "INSERT INTO search_prefixes (kind, prefix, company_id, prominence) VALUES ('word', 'ᄉ', 4, 5), ('word', 'テ', 1, 2)",
  ).run();
}

const names = async (query: string) => (await searchCompanies(db, query, 5)).map((hit) => hit.companyName);

async function entries(): Promise<string[]> {
  const rows = await env.DB.prepare("SELECT kind || ':' || prefix || ':' || company_id AS e FROM search_prefixes").all<{ e: string }>();
  return rows.results.map((row) => row.e).sort();
}

describe("migration 0012: one fold of search", () => {
  it("makes the words of every script findable as the code folds them", async () => {
    await oldCatalogue();
    // With the migrations after it: the code's reads need today's schema (a companies table
    // with name_source, 0017), so that search cannot be asked before it.
    await applyD1Migrations(env.DB, migrations.slice(at));
    for (const [query, name] of [
      ["デンソー", "Denso"],
      ["ペイント", "Nippon Paint"],
      ["रिलायंस", "Reliance Industries"],
      ["इंडस्ट्रीज", "Reliance Industries"],
      ["삼", "Samsung Electronics"],
      ["삼성전자", "Samsung Electronics"],
      ["is bankasi", "Türkiye İş Bankası"],
      ["bankasi", "Türkiye İş Bankası"],
      ["Yapı Kredi", "YAPI KREDİ"],
      ["holdings lodz", "Łódź Holdings"],
      ["lodz finance", "Łódź Holdings"],
      ["quokka", "Quokka Foods"],
      ["QKF", "Quokka Foods"],
    ]) {
      expect(await names(query!), query).toEqual([name]);
    }
    expect((await findCompanyByName(db, "turkiye is bankasi"))?.companyName).toBe("Türkiye İş Bankası");
    expect((await env.DB.prepare("SELECT name_key FROM companies WHERE id = 5").first())?.name_key).toBe("turkiyeisbankasi");
  });

  it("rebuilds every list as the code's upkeep keeps them, with the first left out as a crowded list's floor", async () => {
    await oldCatalogue();
    await applyD1Migrations(env.DB, migrations.slice(at, at + 1));
    const rows = await env.DB.prepare(
      "SELECT c.id, c.name, c.name_key AS nameKey, c.aliases, c.prominence, coalesce((SELECT group_concat(ticker, ' ') FROM company_tickers WHERE company_id = c.id), '') AS tickers FROM companies c",
    ).all<{ id: number; name: string; nameKey: string; aliases: string; prominence: number; tickers: string }>();
    const byList = new Map<string, { id: number; prominence: number }[]>();
    for (const row of rows.results) {
      const prefixes = searchPrefixesOf({
        nameKey: row.nameKey,
        name: row.name,
        aliases: JSON.parse(row.aliases),
        tickers: row.tickers === "" ? [] : [row.tickers],
      });
      for (const entry of prefixes) byList.set(entry, [...(byList.get(entry) ?? []), { id: row.id, prominence: row.prominence }]);
    }
    const expected: string[] = [];
    for (const [entry, members] of byList) {
      members.sort((a, b) => b.prominence - a.prominence || a.id - b.id);
      for (const member of members.slice(0, SEARCH_PREFIX_LIST_SIZE)) expected.push(`${entry}:${member.id}`);
    }
    expect(await entries()).toEqual(expected.sort());
    const zeta = byList.get("word:zet")!;
    expect(
      await env.DB.prepare(
        "SELECT size, floor_company_id AS floor FROM search_prefix_lists WHERE kind = 'word' AND prefix = 'zet'",
      ).first(),
    ).toEqual({
      size: SEARCH_PREFIX_LIST_SIZE,
      floor: zeta[SEARCH_PREFIX_LIST_SIZE]!.id,
    });
  });

  it("leaves the code's upkeep working on every company", async () => {
    await oldCatalogue();
    // With the migrations after it: the code's write path is today's.
    await applyD1Migrations(env.DB, migrations.slice(at));
    const image = await preparedFrom(blackPng);
    await env.DB.prepare("UPDATE company_domains SET domain = 'ril.com' WHERE company_id = 3").run();
    const { companyId } = await addCompany(
      {
        name: "Reliance Industries",
        domains: ["ril.com"],
        aliases: ["रिलायंस इंडस्ट्रीज", "लाभ"],
        ticker: { symbol: "RELI", exchange: "NYSE" },
      },
      image,
    );
    expect(companyId).toBe(3);
    expect(await names("लाभ")).toEqual(["Reliance Industries"]);
    // Its new words and a new company's are indexed by the triggers, folded by the table.
    await addCompany({ name: "Ｎｉｓｓａｎ 日産自動車", domains: ["nissan.example"] }, image);
    expect(await names("日産自動車")).toEqual(["Ｎｉｓｓａｎ 日産自動車"]);
    expect(await names("nissan")).toEqual(["Ｎｉｓｓａｎ 日産自動車"]);
  });
});
