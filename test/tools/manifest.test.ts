import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { countManifestRows, readManifest } from "../../tools/importer/manifest";

/** Manifests as files, read as an import reads them (their rows and line numbers), without storage. */
const dir = mkdtempSync(join(tmpdir(), "manifest-"));
async function rowsOf(name: string, text: string) {
  const path = join(dir, name);
  writeFileSync(path, text);
  const rows = [];
  for await (const parsed of readManifest(path)) rows.push(parsed);
  return rows;
}
const row = (fields: Record<string, unknown>) =>
  JSON.stringify({ domains: [`${String(fields.name).toLowerCase()}.com`], variant: "icon", image: "logo.png", ...fields });

describe("import manifests", () => {
  it("reads line 1 of a JSON Lines file saved with a byte-order mark", async () => {
    const rows = await rowsOf("bom.jsonl", `\uFEFF${row({ name: "First" })}\n${row({ name: "Second" })}\n`);
    expect(rows).toEqual([
      { line: 1, ok: true, row: expect.objectContaining({ name: "First" }) },
      { line: 2, ok: true, row: expect.objectContaining({ name: "Second" }) },
    ]);
  });

  it("stores a share class written after a space with a dash, the form lookups and search find", async () => {
    const rows = await rowsOf(
      "tickers.jsonl",
      [row({ name: "Viaplay", ticker: "VPLAY B", exchange: "OMX" }), row({ name: "Volvo", ticker: "volcar  b" })].join("\n"),
    );
    expect(rows.map((r) => r.ok && r.row.ticker)).toEqual(["VPLAY-B", "VOLCAR-B"]);
  });

  it("takes a prominence written as a whole number, in JSON or CSV, and refuses anything Number() would only make one of", async () => {
    const json = await rowsOf(
      "prominence.jsonl",
      [7, "12", " 3 ", "1e3", "0x10", true, [5], 1.5, -1, 1_000_001].map((prominence, i) => row({ name: `P${i}`, prominence })).join("\n"),
    );
    expect(json.map((r) => (r.ok ? r.row.prominence : r.error))).toEqual([
      7,
      12,
      3,
      ...Array(7).fill("prominence: prominence must be a whole number from 0 to 1000000"),
    ]);
    const csv = await rowsOf("prominence.csv", "name,domains,variant,image,prominence\nA,a.com,icon,a.png,40\nB,b.com,icon,b.png,4e1\n");
    expect(csv.map((r) => (r.ok ? r.row.prominence : r.error))).toEqual([
      40,
      "prominence: prominence must be a whole number from 0 to 1000000",
    ]);
  });

  it("reads isins and crypto columns to their canonical forms, and refuses an ISIN whose check digit fails, naming it", async () => {
    const json = await rowsOf(
      "identifiers.jsonl",
      [
        row({ name: "Apple", isins: ["us0378331005", "US0378331005"], crypto: ["aapl"] }),
        row({ name: "Broken", isins: ["US0378331006"] }),
        row({ name: "Long", crypto: ["THIRTEENCHARS"] }),
      ].join("\n"),
    );
    expect(json.map((r) => (r.ok ? [r.row.isins, r.row.crypto] : r.error))).toEqual([
      [["US0378331005"], ["AAPL"]],
      'isins: "US0378331006": Invalid ISIN: the check digit does not match',
      'crypto: "THIRTEENCHARS": Invalid crypto symbol: 1 to 12 letters or digits',
    ]);
    const csv = await rowsOf(
      "identifiers.csv",
      "name,domains,variant,image,isins,crypto\nA,a.com,icon,a.png,US5949181045; US0378331005,BTC\n",
    );
    expect(csv.map((r) => r.ok && [r.row.isins, r.row.crypto])).toEqual([[["US5949181045", "US0378331005"], ["BTC"]]]);
  });

  const csvHeader = "name,domains,variant,image\n";

  it("reports a CSV row with a quote inside an unquoted field at its own line, and reads the rows after it", async () => {
    const rows = await rowsOf(
      "mid-field-quote.csv",
      csvHeader +
        "Alpha,alpha.com,icon,a.png\n" +
        'Acme 5" Display,acme.com,icon,img.png\n' +
        "Beta,beta.com,icon,b.png\n" +
        'O"Reilly,oreilly.com,icon,o.png\n' +
        "Gamma,gamma.com,icon,g.png\n",
    );
    expect(rows).toEqual([
      { line: 2, ok: true, row: expect.objectContaining({ name: "Alpha", domains: ["alpha.com"] }) },
      { line: 3, ok: false, error: 'not valid CSV: a quoted field must be the whole field (a quote inside one is written "")' },
      { line: 4, ok: true, row: expect.objectContaining({ name: "Beta", domains: ["beta.com"] }) },
      { line: 5, ok: false, error: 'not valid CSV: a quoted field must be the whole field (a quote inside one is written "")' },
      { line: 6, ok: true, row: expect.objectContaining({ name: "Gamma", domains: ["gamma.com"] }) },
    ]);
  });

  it("reads a quoted CSV field holding a line break and an escaped quote as one record, at its first line", async () => {
    const rows = await rowsOf(
      "multiline.csv",
      `${csvHeader}Alpha,alpha.com,icon,a.png\n "Say ""Hi"",\nthen, bye" ,say.com,icon,s.png\nBeta,beta.com,icon,b.png\n`,
    );
    expect(rows).toEqual([
      { line: 2, ok: true, row: expect.objectContaining({ name: "Alpha" }) },
      { line: 3, ok: true, row: expect.objectContaining({ name: 'Say "Hi",\nthen, bye', domains: ["say.com"], image: "s.png" }) },
      { line: 5, ok: true, row: expect.objectContaining({ name: "Beta" }) },
    ]);
  });

  it("counts its rows as it reads them, for the progress line: a quoted line break is one row, blank lines none", async () => {
    const csv = join(dir, "count.csv");
    writeFileSync(csv, `${csvHeader}"Acme\nLabs",acme.com,icon,a.png\n\nBeta,beta.com,icon,b.png\n`);
    expect(await countManifestRows(csv)).toBe(2);
    const jsonl = join(dir, "count.jsonl");
    writeFileSync(jsonl, `${row({ name: "One" })}\n\n${row({ name: "Two" })}\n`);
    expect(await countManifestRows(jsonl)).toBe(2);
  });

  it("reads CSV with CRLF line endings, a quoted line break included", async () => {
    const rows = await rowsOf(
      "crlf.csv",
      `${csvHeader.replace("\n", "\r\n")}Alpha,alpha.com,icon,a.png\r\n"Two\r\nLines",two.com,icon,t.png\r\nAcme 5" Display,acme.com,icon,img.png\r\nBeta,beta.com,icon,b.png\r\n`,
    );
    expect(rows).toEqual([
      { line: 2, ok: true, row: expect.objectContaining({ name: "Alpha", image: "a.png" }) },
      { line: 3, ok: true, row: expect.objectContaining({ name: "Two\nLines", domains: ["two.com"], image: "t.png" }) },
      { line: 5, ok: false, error: expect.stringContaining("not valid CSV") },
      { line: 6, ok: true, row: expect.objectContaining({ name: "Beta", image: "b.png" }) },
    ]);
  });

  it("reports a CSV field whose quote is never closed at its line, and reads every row after it", async () => {
    const rows = await rowsOf(
      "unclosed.csv",
      `${csvHeader}Alpha,alpha.com,icon,a.png\n"Acme,acme.com,icon,x.png\nBeta,beta.com,icon,b.png\n\nGamma,gamma.com,icon,g.png\n`,
    );
    expect(rows).toEqual([
      { line: 2, ok: true, row: expect.objectContaining({ name: "Alpha" }) },
      { line: 3, ok: false, error: "not valid CSV: a quoted field is never closed" },
      { line: 4, ok: true, row: expect.objectContaining({ name: "Beta" }) },
      { line: 6, ok: true, row: expect.objectContaining({ name: "Gamma" }) },
    ]);
    // Far from the end of the file too: a record never spans more lines than any manifest's.
    const many = Array.from({ length: 150 }, (_, i) => `Co${i},co${i}.com,icon,c.png\n`).join("");
    const far = await rowsOf("unclosed-far.csv", `${csvHeader}"Acme,acme.com,icon,x.png\n${many}`);
    expect(far).toHaveLength(151);
    expect(far[0]).toEqual({ line: 2, ok: false, error: "not valid CSV: a quoted field is never closed" });
    expect(far.slice(1).every((r) => r.ok)).toBe(true);
    expect(far.at(-1)).toMatchObject({ line: 152, row: { name: "Co149" } });
  });

  it("stops at a CSV header without a column every row needs, naming it", async () => {
    await expect(rowsOf("semicolons.csv", "name;domains;variant;image\nAlpha;alpha.com;icon;a.png\n")).rejects.toThrow(
      "line 1: the header row has no name, domains, variant, image column",
    );
    await expect(rowsOf("no-image.csv", "name,domains,variant,logo\nAlpha,alpha.com,icon,a.png\n")).rejects.toThrow(
      "the header row has no image column",
    );
  });

  it("refuses a column it does not know: a CSV header's stops the import, a JSON line's fails its row", async () => {
    await expect(
      rowsOf("misspelt.csv", "name,domains,variant,image,license,brand_colour,tickr\nAlpha,alpha.com,icon,a.png,MIT,#abcdef,ALP\n"),
    ).rejects.toThrow('line 1: the header row has an unknown column "license" (did you mean "licence"?)');
    await expect(rowsOf("twice.csv", "name,domains,variant,image,name\nAlpha,alpha.com,icon,a.png,Beta\n")).rejects.toThrow(
      "the header row has the name column twice",
    );
    const rows = await rowsOf(
      "misspelt.jsonl",
      [row({ name: "Alpha", license: "MIT" }), row({ name: "Beta", alias: ["B"] }), row({ name: "Gamma", logo_url: "x" })].join("\n"),
    );
    expect(rows).toEqual([
      { line: 1, ok: false, error: 'unknown field "license" (did you mean "licence"?)' },
      { line: 2, ok: false, error: 'unknown field "alias" (did you mean "aliases"?)' },
      { line: 3, ok: false, error: 'unknown field "logo_url"' },
    ]);
  });

  it("takes a header ending in a comma, as spreadsheets export, and refuses a value in its unnamed column", async () => {
    const rows = await rowsOf(
      "blank-column.csv",
      "name,domains,variant,image,\nAlpha,alpha.com,icon,a.png,\nBeta,beta.com,icon,b.png,MIT\nGamma,gamma.com,icon,g.png\n",
    );
    expect(rows).toEqual([
      { line: 2, ok: true, row: expect.objectContaining({ name: "Alpha" }) },
      { line: 3, ok: false, error: "a value in column 5, which the header row leaves without a name" },
      { line: 4, ok: true, row: expect.objectContaining({ name: "Gamma" }) },
    ]);
  });

  it("refuses a CSV row with more fields than the header, and an exchange without a ticker", async () => {
    const rows = await rowsOf(
      "fields.csv",
      `${csvHeader.replace("\n", ",ticker,exchange\n")}Alpha,alpha.com,icon,a.png,,,extra\nBeta,beta.com,icon,b.png,,NYSE\nGamma,gamma.com,icon,g.png\n`,
    );
    expect(rows).toEqual([
      { line: 2, ok: false, error: "more fields than the header row has columns (a comma inside a field needs quotes)" },
      { line: 3, ok: false, error: "exchange: an exchange needs a ticker" },
      { line: 4, ok: true, row: expect.objectContaining({ name: "Gamma" }) },
    ]);
    expect(await rowsOf("exchange.jsonl", row({ name: "Delta", exchange: "NYSE" }))).toEqual([
      { line: 1, ok: false, error: "exchange: an exchange needs a ticker" },
    ]);
  });

  it("trims a JSON line's aliases and drops empty ones, as CSV's", async () => {
    const rows = await rowsOf("aliases.jsonl", row({ name: "Alpha", aliases: ["", "  ", " Alpha Inc "] }));
    expect(rows).toEqual([{ line: 1, ok: true, row: expect.objectContaining({ aliases: ["Alpha Inc"] }) }]);
  });

  it("refuses what is not UTF-8: a row of another encoding fails, a UTF-16 file stops", async () => {
    const path = join(dir, "latin1.csv");
    writeFileSync(
      path,
      Buffer.concat([
        Buffer.from(csvHeader),
        Buffer.from("Soci\xe9t\xe9 G\xe9n\xe9rale,socgen.com,icon,s.png\n", "latin1"),
        Buffer.from("Beta,beta.com,icon,b.png\n"),
      ]),
    );
    const rows = [];
    for await (const parsed of readManifest(path)) rows.push(parsed);
    expect(rows).toEqual([
      { line: 2, ok: false, error: "not valid UTF-8: save the manifest as UTF-8" },
      { line: 3, ok: true, row: expect.objectContaining({ name: "Beta" }) },
    ]);

    const utf16 = join(dir, "utf16.jsonl");
    writeFileSync(utf16, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`${row({ name: "First" })}\n`, "utf16le")]));
    await expect(async () => {
      for await (const _ of readManifest(utf16)) void _;
    }).rejects.toThrow("line 1 is not UTF-8: save the manifest as UTF-8");
  });
});
