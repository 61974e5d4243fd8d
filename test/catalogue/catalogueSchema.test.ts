import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { findCompany } from "../../src/catalogue/companies";
import { findLogo } from "../../src/catalogue/logos";
import { darkLogo40x20 } from "../fixtures/images";
import { addCompany, db } from "../helpers/catalogue";

async function company(id: number) {
  await env.DB.prepare("INSERT INTO companies (id, name, name_key, prominence, created_at, updated_at) VALUES (?1, ?2, ?2, 0, 0, 0)")
    .bind(id, `c${id}`)
    .run();
}

describe("company_domains keeps one primary domain a company", () => {
  it("refuses a second primary, by insert or by update, and writes nothing", async () => {
    await company(1);
    await env.DB.prepare(
      "INSERT INTO company_domains (domain, company_id, is_primary) VALUES ('one.example', 1, 1), ('two.example', 1, 0)",
    ).run();
    await expect(
      env.DB.prepare("INSERT INTO company_domains (domain, company_id, is_primary) VALUES ('three.example', 1, 1)").run(),
    ).rejects.toThrow(/one primary domain/);
    await expect(env.DB.prepare("UPDATE company_domains SET is_primary = 1 WHERE domain = 'two.example'").run()).rejects.toThrow(
      /one primary domain/,
    );
    const { results } = await env.DB.prepare("SELECT domain, is_primary FROM company_domains ORDER BY domain").all();
    expect(results).toEqual([
      { domain: "one.example", is_primary: 1 },
      { domain: "two.example", is_primary: 0 },
    ]);
  });

  it("lets each company have its own primary, and a primary move within one company", async () => {
    await company(1);
    await company(2);
    await env.DB.prepare(
      "INSERT INTO company_domains (domain, company_id, is_primary) VALUES ('one.example', 1, 1), ('two.example', 2, 1), ('three.example', 1, 0)",
    ).run();
    await env.DB.batch([
      env.DB.prepare("UPDATE company_domains SET is_primary = 0 WHERE domain = 'one.example'"),
      env.DB.prepare("UPDATE company_domains SET is_primary = 1 WHERE domain = 'three.example'"),
    ]);
    // Re-marking the primary itself is no second primary.
    await env.DB.prepare("UPDATE company_domains SET is_primary = 1 WHERE domain = 'three.example'").run();
    const { results } = await env.DB.prepare("SELECT domain FROM company_domains WHERE is_primary = 1 ORDER BY domain").all();
    expect(results).toEqual([{ domain: "three.example" }, { domain: "two.example" }]);
  });
});

describe("a company's primary domain stays while it has logos (it names their R2 keys)", () => {
  const primaryRule = /primary domain of a company with logos/;

  it.each([
    [
      "moved to another of its domains",
      [
        "UPDATE company_domains SET is_primary = 0 WHERE domain = 'keys.example'",
        "UPDATE company_domains SET is_primary = 1 WHERE domain = 'keys.example.net'",
      ],
    ],
    ["renamed", ["UPDATE company_domains SET domain = 'renamed.example' WHERE domain = 'keys.example'"]],
    ["given to another company", ["UPDATE company_domains SET company_id = 1 WHERE domain = 'keys.example'"]],
    ["removed", ["DELETE FROM company_domains WHERE domain = 'keys.example'"]],
  ])("refuses it %s, and the logo keeps its keys", async (_, statements) => {
    await company(1);
    const { companyId, logoId } = await addCompany({ name: "Keys Co", domains: ["keys.example", "keys.example.net"] }, darkLogo40x20());
    const before = await findLogo(db, logoId);
    await expect(env.DB.batch(statements.map((statement) => env.DB.prepare(statement)))).rejects.toThrow(primaryRule);
    expect(await findCompany(db, companyId)).toMatchObject({ domain: "keys.example" });
    expect(await findLogo(db, logoId)).toEqual(before);
  });

  it("lets its other domains go, and the company go with all its logos", async () => {
    const { companyId, logoId } = await addCompany({ name: "Keys Co", domains: ["keys.example", "keys.example.net"] }, darkLogo40x20());
    await env.DB.prepare("DELETE FROM company_domains WHERE domain = 'keys.example.net'").run();
    expect((await findLogo(db, logoId))?.logo.masterKey).toMatch(/^logos\/keys\.example\/icon\./);
    await env.DB.prepare("DELETE FROM companies WHERE id = ?1").bind(companyId).run();
    expect(await findLogo(db, logoId)).toBeNull();
    expect((await env.DB.prepare("SELECT count(*) AS n FROM company_domains WHERE company_id = ?1").bind(companyId).first())?.n).toBe(0);
  });
});
