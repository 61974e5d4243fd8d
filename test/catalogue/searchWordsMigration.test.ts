import { applyD1Migrations, reset } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { searchCompanies } from "../../src/catalogue/search";
import { SEARCH_PREFIX_LIST_SIZE } from "../../src/catalogue/searchPrefixes";
import { db } from "../helpers/catalogue";

/**
 * migrations/0011 on a catalogue indexed before it, when the full-text index and the word lists
 * held every domain's labels as words. Afterwards they hold the words of names, aliases and
 * tickers only, the name lists are as they were, and search finds domains by their start.
 */
const migrations = env.TEST_MIGRATIONS;
const at = migrations.findIndex((m) => m.name === "0011_search_words_without_domains.sql");

beforeEach(async () => {
  await reset();
  await applyD1Migrations(env.DB, migrations.slice(0, at));
});

/** Companies written as before 0011: the tables, the index their triggers kept, and the lists 0009 builds. */
async function oldCatalogue() {
  const company = (id: number, name: string, prominence: number, domains: string[], ticker?: string) => [
    env.DB.prepare(
      "INSERT INTO companies (id, name, name_key, prominence, created_at, updated_at) VALUES (?1, ?2, lower(replace(?2, ' ', '')), ?3, 1, 1)",
    ).bind(id, name, prominence),
    ...domains.map((domain, index) =>
      env.DB.prepare("INSERT INTO company_domains (domain, company_id, is_primary) VALUES (?1, ?2, ?3)").bind(
        domain,
        id,
        index === 0 ? 1 : 0,
      ),
    ),
    ...(ticker
      ? [env.DB.prepare("INSERT INTO company_tickers (ticker, exchange, company_id) VALUES (?1, 'NYSE', ?2)").bind(ticker, id)]
      : []),
  ];
  const crowd = Array.from({ length: SEARCH_PREFIX_LIST_SIZE + 2 }, (_, i) => company(10 + i, `Zeta ${i}`, i % 5, [`zeta${i}.example`]));
  await env.DB.batch([
    ...company(1, "Quokka Foods", 3, ["quokkafoods.com", "qf.io"], "QKF"),
    ...company(2, "Wombat Kitchens", 1, ["wombat.co.uk"]),
    ...crowd.flat(),
  ]);
  const lists = migrations.find((m) => m.name.startsWith("0009_"))!.queries.filter((q) => /search_prefix_staging/.test(q));
  await env.DB.batch(lists.map((q) => env.DB.prepare(q)));
}

const matches = async (query: string) =>
  (
    await env.DB.prepare("SELECT rowid AS id FROM catalogue_search WHERE catalogue_search MATCH ?1 ORDER BY rowid")
      .bind(query)
      .all<{ id: number }>()
  ).results.map((r) => r.id);
const list = async (kind: string, prefix: string) =>
  (
    await env.DB.prepare(
      "SELECT company_id AS id FROM search_prefixes WHERE kind = ?1 AND prefix = ?2 ORDER BY prominence DESC, company_id",
    )
      .bind(kind, prefix)
      .all<{ id: number }>()
  ).results.map((r) => r.id);
const entries = async (kind: string) =>
  (
    await env.DB.prepare("SELECT kind || ':' || prefix || ':' || company_id AS e FROM search_prefixes WHERE kind = ?1 ORDER BY 1")
      .bind(kind)
      .all<{ e: string }>()
  ).results.map((r) => r.e);
const listState = async (kind: string, prefix: string) =>
  env.DB.prepare(
    "SELECT size, floor_prominence AS prominence, floor_company_id AS company FROM search_prefix_lists WHERE kind = ?1 AND prefix = ?2",
  )
    .bind(kind, prefix)
    .first();
const applyIt = () => applyD1Migrations(env.DB, migrations.slice(at, at + 1));

describe("migration 0011: search words without domains", () => {
  it("takes domain labels out of the index and the word lists, and keeps the rest", async () => {
    await oldCatalogue();
    expect(await matches("quokkafoods")).toEqual([1]);
    expect(await list("word", "com")).toEqual([1]);
    const names = await entries("name");

    await applyIt();
    expect(await matches("quokkafoods")).toEqual([]);
    expect(await matches("uk")).toEqual([]);
    expect(await matches("quokka foods")).toEqual([1]);
    expect(await matches("tickers:QKF")).toEqual([1]);
    for (const prefix of ["com", "qf", "io", "uk"]) expect(await list("word", prefix)).toEqual([]);
    for (const prefix of ["quo", "foo", "qkf"]) expect(await list("word", prefix)).toEqual([1]);
    expect(await list("word", "kit")).toEqual([2]);
    expect(await entries("name")).toEqual(names);
    // Search finds a domain by its start instead (the code's reads need the migrations after it too).
    await applyD1Migrations(env.DB, migrations.slice(at + 1));
    expect((await searchCompanies(db, "qf.i", 5)).map((hit) => hit.companyName)).toEqual(["Quokka Foods"]);
    expect((await searchCompanies(db, "wombat.co", 5)).map((hit) => hit.companyName)).toEqual(["Wombat Kitchens"]);
  });

  it("rebuilds a crowded word list as the best known of its companies, with the first left out as its floor", async () => {
    await oldCatalogue();
    await applyIt();
    const crowd = Array.from({ length: SEARCH_PREFIX_LIST_SIZE + 2 }, (_, i) => ({ id: 10 + i, prominence: i % 5 }));
    const ranked = crowd.sort((a, b) => b.prominence - a.prominence || a.id - b.id);
    expect(await list("word", "zet")).toEqual(ranked.slice(0, SEARCH_PREFIX_LIST_SIZE).map((c) => c.id));
    const floor = ranked[SEARCH_PREFIX_LIST_SIZE]!;
    expect(await listState("word", "zet")).toEqual({ size: SEARCH_PREFIX_LIST_SIZE, prominence: floor.prominence, company: floor.id });
  });

  it("leaves triggers that keep the index in step with names, aliases and tickers, and domains out of it", async () => {
    await oldCatalogue();
    await applyIt();
    await env.DB.batch([
      env.DB.prepare("UPDATE companies SET name = 'Quokka Pantry', aliases = '[\"Marsupial Eats\"]' WHERE id = 1"),
      env.DB.prepare("INSERT INTO company_tickers (ticker, exchange, company_id) VALUES ('QKP', 'LSE', 1)"),
      env.DB.prepare("INSERT INTO company_domains (domain, company_id, is_primary) VALUES ('quokkapantry.com', 1, 0)"),
    ]);
    expect(await matches("pantry")).toEqual([1]);
    expect(await matches("foods")).toEqual([]);
    expect(await matches("marsupial")).toEqual([1]);
    expect(await matches("tickers:QKP")).toEqual([1]);
    expect(await matches("quokkapantry")).toEqual([]);
    await env.DB.prepare("DELETE FROM companies WHERE id = 1").run();
    expect(await matches("pantry")).toEqual([]);
  });
});
