import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cachePurges } from "../../schema";
import { importCompanyLogo } from "../../src/catalogue/importLogo";
import { fileReport } from "../../src/corrections/reports";
import { sha256Hex } from "../../src/lib/encoding";
import { ok } from "../../src/lib/errors";
import { resolveLogo } from "../../src/catalogue/resolveLogo";
import { runAdmin } from "../../tools/admin/run";
import { prepareLogo } from "../../tools/importer/prepare";
import { inProcess, platformForThisFile, root } from "./helpers";

/**
 * The operators' commands of issue 41 (docs/corrections.md, "Working the queue"): `reports list` and
 * `reports resolve`, `takedown add | remove | list`, and `purge`, on a local state as
 * `npm run admin` runs them. Reports are filed with the function every door calls (the doors
 * themselves are tested in test/corrections/reports.test.ts).
 */
const file = platformForThisFile();
const admin = (...args: string[]) => inProcess((io) => runAdmin([...args, "--persist-to", file.dir], io, file.platform.borrow));
const files = mkdtempSync(join(tmpdir(), "logo-lookup-corrections-"));
afterAll(() => rmSync(files, { recursive: true, force: true }));

const svgOf = (name: string) => new Uint8Array(readFileSync(join(root, "node_modules", "simple-icons", "icons", `${name}.svg`)));

async function addCompany(name: string, domain: string, svg: string) {
  const bytes = svgOf(svg);
  const prepared = await prepareLogo(bytes);
  if (!prepared.ok) throw new Error(prepared.error);
  const written = await importCompanyLogo(
    file.platform.db,
    file.platform.bucket,
    {
      name,
      domains: [domain],
      aliases: [],
      variant: "icon",
      prominence: 1,
      sourceSet: "simple-icons",
      licence: "CC0-1.0",
      sourceHash: await sha256Hex(bytes),
    },
    async () => ok(prepared.logo),
  );
  if (!written.ok) throw new Error(written.error.message);
  return written.value;
}

describe("npm run admin -- reports", () => {
  it("lists the open queue, one item per logo, and resolves one with a replacement file", async () => {
    const { logoId } = await addCompany("Wrongly", "wrongly-co.com", "gitlab");
    for (const via of ["rest", "mcp", "portal"] as const)
      expect(
        (await fileReport(file.platform.db, { domain: "wrongly-co.com", kind: "wrong_logo", message: `via ${via}`, accountId: null, via }))
          .ok,
      ).toBe(true);

    const listed = await admin("reports", "list", "--open");
    expect(listed.status).toBe(0);
    const { items } = listed.json() as { items: { id: number; domain: string; logoId: number; reports: { via: string }[] }[] };
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ domain: "wrongly-co.com", logoId, status: "open" });
    expect(items[0]!.reports.map((r) => r.via)).toEqual(["rest", "mcp", "portal"]);
    expect((await admin("reports", "list", "--domain", "other-co.com")).json()).toEqual({ items: [] });

    const replacement = join(files, "right.svg");
    writeFileSync(replacement, svgOf("github"));
    const resolved = await admin(
      "reports",
      "resolve",
      String(items[0]!.id),
      "--action",
      "replace",
      "--file",
      replacement,
      "--note",
      "Their mark now",
    );
    expect(resolved.status).toBe(0);
    expect(resolved.json()).toMatchObject({ id: items[0]!.id, status: "resolved", action: "replace", note: "Their mark now" });

    // The logo served now is the operator's, and the purge journal tells every isolate so.
    const served = await resolveLogo(file.platform.db, { kind: "domain", value: "wrongly-co.com" });
    expect(served?.logoId).not.toBe(logoId);
    expect(served?.masterKey).toMatch(/^logos\/wrongly-co\.com\/icon\.corrected\./);
    const journal = await file.platform.db.select().from(cachePurges).all();
    expect(journal.map((row) => row.domain)).toContain("wrongly-co.com");
    expect((await admin("reports", "list", "--open")).json()).toEqual({ items: [] });

    // Resolved already: a second resolve is refused.
    const again = await admin("reports", "resolve", String(items[0]!.id), "--action", "dismiss");
    expect(again.status).toBe(1);
    expect(again.stderr).toContain("resolved already");
  });

  it("dismisses with a note, and refuses what is not a resolution", async () => {
    await addCompany("Fine", "fine-co.com", "gitlab");
    const filed = await fileReport(file.platform.db, {
      domain: "fine-co.com",
      kind: "other",
      message: "looks odd",
      accountId: null,
      via: "rest",
    });
    const id = filed.ok ? String(filed.value.itemId) : "0";
    expect((await admin("reports", "resolve", id, "--action", "replace")).status).toBe(2);
    expect((await admin("reports", "resolve", id, "--action", "paint")).status).toBe(2);
    expect((await admin("reports", "resolve", id, "--action", "dismiss", "--file", "x.png")).status).toBe(2);
    expect((await admin("reports", "resolve", id, "--action", "replace", "--file", join(files, "missing.png"))).status).toBe(2);
    expect((await admin("reports", "resolve", "999999", "--action", "dismiss")).status).toBe(1);
    const dismissed = await admin("reports", "resolve", id, "--action", "dismiss", "--note", "It is their logo");
    expect(dismissed.status).toBe(0);
    expect(dismissed.json()).toMatchObject({ status: "dismissed", note: "It is their logo" });
  });
});

describe("npm run admin -- takedown and purge", () => {
  it("adds, lists and removes a takedown, each purging the domain", async () => {
    await addCompany("Taken", "taken-co.com", "gitlab");
    const added = await admin("takedown", "add", "--domain", "taken-co.com", "--reason", "Trademark owner's request");
    expect(added.status).toBe(0);
    expect(added.json()).toMatchObject({ domain: "taken-co.com", reason: "Trademark owner's request" });
    expect((await admin("takedown", "list")).json()).toMatchObject({ takedowns: [{ domain: "taken-co.com" }] });
    expect((await admin("takedown", "add", "--domain", "taken-co.com")).status).toBe(2);
    expect((await admin("takedown", "remove", "--domain", "taken-co.com")).status).toBe(0);
    expect((await admin("takedown", "remove", "--domain", "taken-co.com")).status).toBe(1);
    expect((await admin("takedown", "list")).json()).toEqual({ takedowns: [] });
  });

  it("purge writes the journal every isolate follows, for the host and its registrable domain", async () => {
    const purged = await admin("purge", "--domain", "shop.purged-co.com");
    expect(purged.status).toBe(0);
    expect(purged.json()).toMatchObject({ domains: ["shop.purged-co.com", "purged-co.com"] });
    const rows = await file.platform.db.select().from(cachePurges).all();
    expect(rows.map((row) => row.domain)).toEqual(expect.arrayContaining(["shop.purged-co.com", "purged-co.com"]));
    expect((await admin("purge")).status).toBe(2);
    expect((await admin("purge", "--domain", "not a domain")).status).toBe(2);
  });
});
