import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { companies, companyDomains, companyTickers, retiredObjects } from "../../schema";
import { logosInIdOrder } from "../../src/catalogue/logos";
import { importCommand } from "../../tools/importer/command";
import { type ConvertPool, startConvertPool } from "../../tools/importer/convertPool";
import { type ImportWriter, startImportWriter } from "../../tools/importer/writer";
import { contrastOf } from "../../src/images/colour";
import { logoObjectKeys, renditionKey, vectorKey } from "../../src/images/objectKeys";
import { PAGES } from "../../src/images/renditions";
import { runImport } from "../../tools/importer/run";
import { flatPngManifest, freshState, inProcess, openSharedPlatform, tool } from "./helpers";
import { writtenObjectKeys } from "../helpers/objects";

let state: { dir: string; cleanup: () => void };
let dir: string;
let platform: Awaited<ReturnType<typeof openSharedPlatform>>;
// One writer and one conversion pool for the file: each import runs in this process, as
// `npm run import` would, minus starting them again.
let writer: ImportWriter;
let pool: ConvertPool;

const wideSvg = (fill: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 100" width="200" height="100"><rect x="10" y="10" width="180" height="80" fill="${fill}"/></svg>`;

beforeAll(async () => {
  state = await freshState();
  // One after the other: two workerd processes opening the same SQLite file at once can meet its lock.
  platform = await openSharedPlatform(state.dir);
  writer = await startImportWriter({ persistTo: state.dir });
  pool = startConvertPool();
  dir = join(state.dir, "manifest");
  const { mkdirSync } = await import("node:fs");
  mkdirSync(join(dir, "img"), { recursive: true });
  writeFileSync(join(dir, "img/acme.svg"), wideSvg("#111111"));
  writeFileSync(
    join(dir, "img/beta.png"),
    await sharp({ create: { width: 300, height: 100, channels: 4, background: "#3366ff" } })
      .png()
      .toBuffer(),
  );
  writeFileSync(join(dir, "img/broken.png"), "this is not an image");
  const rows = [
    {
      name: "Acme",
      domains: ["acme.com", "www.acme.io"],
      ticker: "acme",
      exchange: "nyse",
      variant: "full",
      image: "img/acme.svg",
      source_set: "fixtures",
      licence: "CC0-1.0",
      aliases: ["Acme Corp"],
    },
    { name: "Beta", domains: ["beta.org"], variant: "icon", image: "img/beta.png" },
    { name: "", domains: ["nameless.com"], variant: "icon", image: "img/beta.png" },
    { name: "Bad Domain", domains: ["localhost"], variant: "icon", image: "img/beta.png" },
    { name: "Broken", domains: ["broken.com"], variant: "icon", image: "img/broken.png" },
    { name: "Missing", domains: ["missing.com"], variant: "icon", image: "img/missing.png" },
    { name: "Wrong Variant", domains: ["variant.com"], variant: "square", image: "img/beta.png" },
  ];
  writeFileSync(join(dir, "logos.jsonl"), `${rows.map((r) => JSON.stringify(r)).join("\n")}\n{not json\n`);
});
afterAll(async () => {
  await Promise.all([platform.dispose(), writer.stop(), pool.close()]);
  state.cleanup();
});

const importManifest = (file: string) =>
  inProcess((io) => importCommand([join(dir, file), "--persist-to", state.dir], io, { writer, pool }));
const snapshot = async () => {
  const { db, bucket } = platform;
  return {
    companies: await db.select().from(companies).all(),
    domains: await db.select().from(companyDomains).all(),
    tickers: await db.select().from(companyTickers).all(),
    logos: await logosInIdOrder(db),
    objects: (await bucket.list({ prefix: "logos/" })).objects.map((o) => o.key).sort(),
    retired: (await db.select().from(retiredObjects).all()).map((r) => r.key).sort(),
  };
};

describe("npm run import", () => {
  it("imports the good rows and reports each bad one with its line number", async () => {
    const result = await importManifest("logos.jsonl");
    expect(result.status).toBe(2);
    const report = result.json();
    expect(report).toMatchObject({ rows: 8, created: 2, updated: 0, unchanged: 0, failed: 6 });
    expect(report.failures).toEqual([
      { line: 3, error: "name: name is required" },
      { line: 4, error: 'domains: "localhost" is not a valid domain (not a public hostname)' },
      { line: 5, error: "unreadable image (expected SVG, PNG, JPEG, WebP or GIF)" },
      { line: 6, error: "image file not found: img/missing.png" },
      { line: 7, error: "variant: variant must be full or icon" },
      { line: 8, error: "not valid JSON" },
    ]);
    expect(result.stderr).toContain("line 5: unreadable image");

    const after = await snapshot();
    expect(after.companies.map((c) => c.name).sort()).toEqual(["Acme", "Beta"]);
    expect(after.domains.map((d) => d.domain).sort()).toEqual(["acme.com", "acme.io", "beta.org"]);
    expect(after.tickers).toEqual([{ ticker: "ACME", exchange: "NYSE", companyId: after.companies.find((c) => c.name === "Acme")!.id }]);
  });

  it("rasterises SVGs to a 1,200 px master with the aspect kept, and never upscales rasters", async () => {
    const { logos: rows } = await snapshot();
    const acme = rows.find((l) => l.format === "svg")!;
    expect(acme).toMatchObject({ width: 1200, height: 600, variant: "full", tone: "dark", sourceSet: "fixtures", licence: "CC0-1.0" });
    const beta = rows.find((l) => l.format === "png")!;
    expect(beta).toMatchObject({
      width: 300,
      height: 100,
      tone: "opaque",
      sourceSet: "manifest",
      licence: "unknown",
      renditions: { light: false, dark: false, vector: false },
    });
  });

  it("stores a PNG master, the original, the sanitised vector and, for dark ink, a rendition for dark pages; no greyscale under 2 megapixels", async () => {
    await (async ({ db, bucket }) => {
      const acme = (await logosInIdOrder(db)).find((l) => l.format === "svg")!;
      const read = async (key: string | null) => new Uint8Array(await (await bucket.get(key!))!.arrayBuffer());
      const master = await sharp(await read(acme.masterKey)).metadata();
      expect(master).toMatchObject({ format: "png", width: 1200, height: 600 });
      expect(new TextDecoder().decode(await read(acme.originalKey))).toBe(wideSvg("#111111"));
      // Unsanitised: where a zone serves the bucket whole, a browser downloads it, never renders it.
      expect((await bucket.head(acme.originalKey))!.httpMetadata).toMatchObject({
        contentType: "application/octet-stream",
        contentDisposition: "attachment",
      });

      expect(acme.renditions).toMatchObject({ light: false, dark: true, plain: "master", vector: true });
      // A 1,200 × 600 master's greyscale renditions are made on the first request for them.
      expect(await bucket.head(renditionKey(acme.masterKey, "grey"))).toBeNull();
      const dark = await sharp(await read(renditionKey(acme.masterKey, "dark")))
        .ensureAlpha()
        .raw()
        .toBuffer();
      const centre = (600 / 2) * 1200 * 4 + (1200 / 2) * 4;
      const [r, g, b, a] = dark.subarray(centre, centre + 4);
      expect([r === g && g === b, a]).toEqual([true, 255]);
      expect(contrastOf([r!, g!, b!], PAGES.dark)).toBeGreaterThanOrEqual(3);
      expect(await bucket.head(renditionKey(acme.masterKey, "darkGrey"))).toBeNull();
      expect(new TextDecoder().decode(await read(vectorKey(acme.masterKey)))).toContain(
        '<rect x="10" y="10" width="180" height="80" fill="#111111"></rect>',
      );
    })(platform);
  });

  it("changes nothing when the same manifest is imported again", async () => {
    const before = await snapshot();
    const result = await importManifest("logos.jsonl");
    expect(result.json()).toMatchObject({ created: 0, updated: 0, unchanged: 2, failed: 6 });
    expect(await snapshot()).toEqual(before);
  });

  it("replaces a changed image, retiring the old one's objects, and leaves no orphaned object", async () => {
    const before = await snapshot();
    writeFileSync(join(dir, "img/acme.svg"), wideSvg("#fafafa"));
    const result = await importManifest("logos.jsonl");
    expect(result.json()).toMatchObject({ created: 0, updated: 1, unchanged: 1 });
    const after = await snapshot();
    const acmeBefore = before.logos.find((l) => l.format === "svg")!;
    const acmeAfter = after.logos.find((l) => l.format === "svg")!;
    expect(acmeAfter.id).toBe(acmeBefore.id);
    expect(acmeAfter.tone).toBe("light");
    expect(acmeAfter.contentHash).not.toBe(acmeBefore.contentHash);
    // The old image's objects stay for redirects cached before, retired: deleted two days on.
    expect(after.retired).toEqual(logoObjectKeys(acmeBefore).sort());
    const referenced = after.logos.flatMap((l) => logoObjectKeys(l));
    expect(referenced).not.toContain(acmeBefore.masterKey);
    // Nothing asked for a greyscale rendition, so none was made (src/images/greyOnDemand.ts).
    expect(after.objects).toEqual([...after.logos.flatMap((l) => writtenObjectKeys(l)), ...writtenObjectKeys(acmeBefore)].sort());
  });

  it("reads CSV manifests with ;-separated lists", async () => {
    writeFileSync(
      join(dir, "more.csv"),
      "name,domains,variant,image,ticker,exchange,aliases,brand_color\n" +
        "Gamma,gamma.dev;gamma.io,icon,img/beta.png,GAM,NASDAQ,Gamma Inc;GMA,#AA00ff\n" +
        "Delta,not a domain,icon,img/beta.png,,,,\n",
    );
    const result = await importManifest("more.csv");
    expect(result.status).toBe(2);
    expect(result.json()).toMatchObject({
      created: 1,
      failed: 1,
      failures: [{ line: 3, error: expect.stringContaining("not a valid domain") }],
    });
    const { companies: rows } = await snapshot();
    expect(rows.find((c) => c.name === "Gamma")).toMatchObject({ aliases: ["Gamma Inc", "GMA"], brandColor: "#aa00ff" });
  });

  it("skips a malformed CSV record, reporting its line, and imports the rows on either side of it", async () => {
    writeFileSync(
      join(dir, "stray-quote.csv"),
      "name,domains,variant,image\n" +
        "Epsilon,epsilon.dev,icon,img/beta.png\n" +
        'Zeta,"zeta.dev"x,icon,img/beta.png\n' +
        "Eta,eta.dev,icon,img/beta.png\n",
    );
    const result = await importManifest("stray-quote.csv");
    expect(result.status).toBe(2);
    expect(result.json()).toMatchObject({
      rows: 3,
      created: 2,
      failed: 1,
      failures: [{ line: 3, error: expect.stringContaining("not valid CSV") }],
    });
    const { companies: rows } = await snapshot();
    expect(rows.map((c) => c.name)).toEqual(expect.arrayContaining(["Epsilon", "Eta"]));
    expect(rows.map((c) => c.name)).not.toContain("Zeta");
  });

  it("fails clearly, exiting 1, on a manifest it cannot read (missing: as a process)", async () => {
    const missing = await tool("import", [join(dir, "nope.jsonl")], state.dir);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/ENOENT|no such file/);
    const wrongType = await importManifest("img/beta.png");
    expect(wrongType.status).toBe(1);
    expect(wrongType.stderr).toContain("use .jsonl (JSON Lines) or .csv");
  });

  it("fails clearly, exiting 1 and writing nothing, on a local state the migrations have not reached", async () => {
    const empty = mkdtempSync(join(tmpdir(), "logo-lookup-unmigrated-"));
    try {
      const result = await inProcess((io) => importCommand([join(dir, "logos.jsonl"), "--persist-to", empty], io, { pool }));
      expect(result.status).toBe(1);
      expect(result.stderr).toContain("the local database has no companies, company_domains, logos tables yet");
      expect(result.stderr).toContain(`npx wrangler d1 migrations apply DB --local --persist-to ${empty}`);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("prints the first hundred failures as they happen, and lists every one in the summary", async () => {
    const rows = Array.from({ length: 150 }, (_, i) =>
      JSON.stringify({ name: `Missing ${i}`, domains: [`missing-${i}.com`], variant: "icon", image: "img/nowhere.png" }),
    );
    writeFileSync(join(dir, "all-missing.jsonl"), `${rows.join("\n")}\n`);
    const result = await importManifest("all-missing.jsonl");
    expect(result.status).toBe(2);
    expect(result.json()).toMatchObject({ rows: 150, failed: 150 });
    expect(result.json().failures).toHaveLength(150);
    const printed = result.stderr.split("\n").filter((line) => /^line \d+: /.test(line));
    expect(printed).toHaveLength(100);
    expect(result.stderr).toContain("… more rows fail: the summary lists every one");
  });

  it.each([["1e2"], ["0x10"], ["0"], ["10001"]])("refuses --batch-size %j before reading anything, exiting 1", async (size) => {
    const result = await inProcess((io) =>
      importCommand([join(dir, "logos.jsonl"), "--batch-size", size, "--persist-to", state.dir], io, { writer, pool }),
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("--batch-size must be a whole number from 1 to 10000");
  });

  it("converts the batches in manifest order however their checks finish, so the first batch is written first", async () => {
    const manifest = await flatPngManifest(join(state.dir, "ordered"), 6, (i) => ({ name: `Ordered ${i}`, domain: `ordered-${i}.com` }));
    const lineOf = new Map<string, number>();
    for (let i = 0; i < 6; i++) lineOf.set(readFileSync(join(state.dir, "ordered", `img/${i}.png`)).toString("base64"), i + 1);
    const converted: number[] = [];
    // The first batch's check against the catalogue answers last, as a busy writer's may.
    let checks = 0;
    const slowFirstCheck: ImportWriter = {
      ...writer,
      sourceHashes: async (keys) => {
        if (checks++ === 0) await new Promise((resolve) => setTimeout(resolve, 500));
        return writer.sourceHashes(keys);
      },
    };
    const report = await runImport(manifest, slowFirstCheck, {
      batchSize: 2,
      ahead: 2,
      convert: (bytes) => {
        converted.push(lineOf.get(Buffer.from(bytes).toString("base64"))!);
        return pool.convert(bytes);
      },
    });
    expect(report).toMatchObject({ rows: 6, created: 6, failed: 0 });
    expect(converted).toEqual([1, 2, 3, 4, 5, 6]);
  });
});
