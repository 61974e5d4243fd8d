import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addTakedown, listTakedowns, removeTakedown } from "../../src/corrections/takedowns";
import { readPurgeJournal } from "../../src/purge/purge";
import { env } from "cloudflare:workers";
import { rest, secretKeyFor } from "../api/helpers";
import { db } from "../helpers/catalogue";
import { agent, company, failure, structured } from "../mcp/helpers";
import { BASE, freshCompany, freshKey } from "../lookup/helpers";

/**
 * Takedowns (issue 41, "Takedowns"; docs/corrections.md): `admin takedown add` stops a domain's
 * logos on every surface — lookups and assets 451 with the short reason, the REST API 451, MCP
 * tools a clear error — and lifting it brings them back. The commands are the operator tools'
 * own functions, which write D1 and the purge journal as the CLI does; the Worker's isolate
 * follows the journal (read here at once rather than after its ten seconds).
 */
const get = (path: string) => exports.default.fetch(`${BASE}${path}`, { redirect: "manual" });

describe("a takedown", () => {
  it("answers 451 with its reason to a lookup that was served a moment before, and 200 again once lifted", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    const before = await get(`/${domain}?token=${token}`);
    expect(before.status).toBe(302);
    const asset = before.headers.get("location")!;
    expect((await get(new URL(asset, BASE).pathname)).status).toBe(200);

    const added = await addTakedown(db, domain, "Removed at the trademark owner's request");
    expect(added).toMatchObject({ ok: true, value: { domain, reason: "Removed at the trademark owner's request" } });
    await readPurgeJournal(env);

    // The lookup was warm in this isolate: the purge dropped it, and the router answers 451.
    for (let i = 0; i < 2; i++) {
      const refused = await get(`/${domain}?token=${token}`);
      expect(refused.status).toBe(451);
      expect(await refused.text()).toBe(`Logo of ${domain} taken down: Removed at the trademark owner's request`);
    }
    expect((await get(`/www.${domain}?token=${token}`)).status).toBe(451);
    // The public asset a redirect handed out a moment ago is refused too.
    const gone = await get(new URL(asset, BASE).pathname);
    expect(gone.status).toBe(451);
    expect(await gone.text()).toContain("Removed at the trademark owner's request");

    expect(await listTakedowns(db)).toMatchObject({ ok: true, value: { takedowns: [expect.objectContaining({ domain })] } });

    expect(await removeTakedown(db, domain)).toMatchObject({ ok: true, value: { domain } });
    await readPurgeJournal(env);
    expect((await get(`/${domain}?token=${token}`)).status).toBe(302);
  });

  it("refuses the REST API with 451 and MCP tools with a clear error, and is entered in the change log", async () => {
    const ids = await company("Banned Co", ["banned-co.com"]);
    await addTakedown(db, "banned-co.com", "Court order 12/2026");
    await readPurgeJournal(env);

    const { key } = await secretKeyFor("launch");
    const byDomain = await rest("/v1/companies/lookup?domain=banned-co.com", key);
    expect(byDomain.status).toBe(451);
    expect(await byDomain.json()).toMatchObject({ error: "Logo of banned-co.com taken down: Court order 12/2026" });
    expect((await rest(`/v1/companies/${ids.companyId}`, key)).status).toBe(451);

    const { call } = await agent("launch");
    expect(failure(await call("fetch_logo", { query: "banned-co.com" }))).toBe("Logo of banned-co.com taken down: Court order 12/2026");
    const batch = structured<{ results: { ok: boolean; error?: string }[] }>(await call("fetch_logos", { domains: ["banned-co.com"] }));
    expect(batch.results[0]).toMatchObject({ ok: false, error: "Logo of banned-co.com taken down: Court order 12/2026" });

    const log = await get("/v1/changes?domain=banned-co.com");
    expect(log.status).toBe(200);
    expect(await log.json()).toMatchObject({
      changes: [{ domain: "banned-co.com", change: "takedown", detail: "Court order 12/2026", method: "operator" }],
    });
  });

  it("the change log refuses what it cannot read, with 400s", async () => {
    for (const query of ["limit=0", "limit=101", "limit=ten", "before=-1", "before=abc"]) {
      const response = await get(`/v1/changes?${query}`);
      expect(response.status, query).toBe(400);
      expect(await response.json()).toMatchObject({ code: "invalid_argument" });
    }
    expect(await (await get("/v1/changes")).json()).toEqual({ changes: [], next: null });
  });

  it("is refused without a reason or for something that is not a domain, and lifting an unknown one says so", async () => {
    expect(await addTakedown(db, "acme.com", "  ")).toMatchObject({ ok: false, error: { code: "invalid_argument" } });
    expect(await addTakedown(db, "not a domain", "why")).toMatchObject({ ok: false, error: { code: "invalid_argument" } });
    expect(await removeTakedown(db, "never-taken-down.com")).toMatchObject({ ok: false, error: { code: "not_found" } });
  });
});
