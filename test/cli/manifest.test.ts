import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readManifest } from "../../src/cli/importer/manifest";

/** Manifests as files, read as an import reads them (their rows and line numbers), without storage. */
const dir = mkdtempSync(join(tmpdir(), "manifest-"));
async function rowsOf(name: string, text: string) {
  const path = join(dir, name);
  writeFileSync(path, text);
  const rows = [];
  for await (const parsed of readManifest(path)) rows.push(parsed);
  return rows;
}
const row = (fields: Record<string, unknown>) => JSON.stringify({ domains: [`${String(fields.name).toLowerCase()}.com`], variant: "icon", image: "logo.png", ...fields });

describe("import manifests", () => {
  it("reads line 1 of a JSON Lines file saved with a byte-order mark", async () => {
    const rows = await rowsOf("bom.jsonl", `\uFEFF${row({ name: "First" })}\n${row({ name: "Second" })}\n`);
    expect(rows).toEqual([
      { line: 1, ok: true, row: expect.objectContaining({ name: "First" }) },
      { line: 2, ok: true, row: expect.objectContaining({ name: "Second" }) },
    ]);
  });

  it("stores a share class written after a space with a dash, the form lookups and search find", async () => {
    const rows = await rowsOf("tickers.jsonl", [row({ name: "Viaplay", ticker: "VPLAY B", exchange: "OMX" }), row({ name: "Volvo", ticker: "volcar  b" })].join("\n"));
    expect(rows.map((r) => r.ok && r.row.ticker)).toEqual(["VPLAY-B", "VOLCAR-B"]);
  });
});
