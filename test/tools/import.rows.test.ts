import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { companies, companyTickers, logos } from "../../schema";
import { findCompanyByTicker } from "../../src/catalogue/companies";
import { importCommand } from "../../tools/importer/command";
import { type ConvertPool, startConvertPool } from "../../tools/importer/convertPool";
import { runImport } from "../../tools/importer/run";
import { type ImportWriter, startImportWriter } from "../../tools/importer/writer";
import { RENDITIONS_VERSION } from "../../src/images/renditions";
import { FAKE_S3, startFakeR2S3 } from "../fakes/r2S3Api";
import { freshState, inProcess, openSharedPlatform } from "./helpers";

/** What an import does with a row's columns, tickers and images, as an operator sees it. */
let state: { dir: string; cleanup: () => void };
let dir: string;
let platform: Awaited<ReturnType<typeof openSharedPlatform>>;
let writer: ImportWriter;
let pool: ConvertPool;
let server: Server;
let origin: string;
/** Files of /mb/ served, rows written, and the most files served and not yet written at once. */
let served = 0;
let rowsWritten = 0;
let mostHeldFiles = 0;

beforeAll(async () => {
  state = await freshState();
  platform = await openSharedPlatform(state.dir);
  writer = await startImportWriter({ persistTo: state.dir });
  pool = startConvertPool();
  dir = join(state.dir, "rows");
  mkdirSync(join(dir, "img"), { recursive: true });
  for (let i = 0; i < 12; i++) {
    const background = `#${(0x203040 + i * 0x050301).toString(16).slice(-6)}`;
    writeFileSync(
      join(dir, `img/${i}.png`),
      await sharp({ create: { width: 40, height: 20, channels: 4, background } })
        .png()
        .toBuffer(),
    );
  }
  // Answers /big with 11 MB and no content-length, as a chunked or lying server may.
  server = createServer((request, response) => {
    if (request.url?.startsWith("/mb/")) {
      served++;
      mostHeldFiles = Math.max(mostHeldFiles, served - rowsWritten);
      return void response.writeHead(200, { "content-type": "image/png" }).end(Buffer.alloc(1024 * 1024, request.url));
    }
    if (request.url !== "/big") return void response.writeHead(404).end();
    response.writeHead(200, { "content-type": "image/png" });
    const chunk = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < 11; i++) response.write(chunk);
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await Promise.all([platform?.dispose(), writer?.stop(), pool?.close(), new Promise((resolve) => server?.close(resolve))]);
  state?.cleanup();
});

const write = (file: string, rows: object[]) => writeFileSync(join(dir, file), `${rows.map((row) => JSON.stringify(row)).join("\n")}\n`);
// The image server of these tests is on loopback: the operator says so (--allow-private-urls).
const importFile = (file: string, flags = ["--allow-private-urls"]) =>
  inProcess((io) => importCommand([join(dir, file), ...flags, "--persist-to", state.dir], io, { writer, pool }));
const company = (name: string) => platform.db.select().from(companies).where(eq(companies.name, name)).get();
const logoOf = async (name: string) =>
  platform.db
    .select()
    .from(logos)
    .where(eq(logos.companyId, (await company(name))!.id))
    .get();

describe("an import's rows", () => {
  it("leaves a stored prominence and licence as they are when a later manifest leaves the column out", async () => {
    write("first.jsonl", [
      {
        name: "Keeper",
        domains: ["keeper.com"],
        variant: "icon",
        image: "img/0.png",
        prominence: 7,
        licence: "MIT",
        brand_color: "#112233",
      },
    ]);
    expect((await importFile("first.jsonl")).json()).toMatchObject({ created: 1, failed: 0 });
    write("second.jsonl", [{ name: "Keeper", domains: ["keeper.com"], variant: "icon", image: "img/0.png" }]);
    expect((await importFile("second.jsonl")).json()).toMatchObject({ created: 0, updated: 0, unchanged: 1, failed: 0 });
    writeFileSync(join(dir, "second.csv"), "name,domains,variant,image,licence,prominence\nKeeper,keeper.com,icon,img/0.png,,\n");
    expect((await importFile("second.csv")).json()).toMatchObject({ unchanged: 1, failed: 0 });
    expect(await company("Keeper")).toMatchObject({ prominence: 7, brandColor: "#112233" });
    expect(await logoOf("Keeper")).toMatchObject({ licence: "MIT" });
    // The defaults are a new company's and logo's.
    write("new.jsonl", [{ name: "Fresh", domains: ["fresh.com"], variant: "icon", image: "img/1.png" }]);
    await importFile("new.jsonl");
    expect(await company("Fresh")).toMatchObject({ prominence: 0 });
    expect(await logoOf("Fresh")).toMatchObject({ licence: "unknown" });
  });

  it("refuses a ticker another company holds under any spelling a lookup finds it by, in the manifest and in the catalogue", async () => {
    write("tickers.jsonl", [
      { name: "BT Group", domains: ["bt.com"], variant: "icon", image: "img/2.png", ticker: "BT.A", exchange: "LSE", prominence: 5 },
      { name: "Impostor", domains: ["impostor.com"], variant: "icon", image: "img/3.png", ticker: "BT-A", exchange: "LSE", prominence: 99 },
      { name: "Tencent", domains: ["tencent.com"], variant: "icon", image: "img/4.png", ticker: "0700", exchange: "HKEX" },
      {
        name: "Impostor HK",
        domains: ["impostor.hk"],
        variant: "icon",
        image: "img/5.png",
        ticker: "700",
        exchange: "HKEX",
        prominence: 99,
      },
      // The same symbol on another exchange is another listing; so is one held without an exchange.
      { name: "Other Listing", domains: ["other-listing.com"], variant: "icon", image: "img/7.png", ticker: "BT.A", exchange: "NYSE" },
      { name: "Unlisted", domains: ["unlisted.com"], variant: "icon", image: "img/6.png", ticker: "BT.A" },
    ]);
    const result = await importFile("tickers.jsonl");
    expect(result.status).toBe(2);
    expect(result.json()).toMatchObject({ created: 4, failed: 2 });
    expect(result.json().failures).toEqual([
      { line: 2, error: "ticker BT-A already belongs to another company as BT.A on LSE" },
      { line: 4, error: "ticker 700 already belongs to another company as 0700 on HKEX" },
    ]);
    expect(await findCompanyByTicker(platform.db, "LSE:BT-A")).toMatchObject({ companyName: "BT Group" });
    expect(await findCompanyByTicker(platform.db, "HKEX:700")).toMatchObject({ companyName: "Tencent" });

    // Against what is stored, a later manifest's rows likewise.
    write("later.jsonl", [
      { name: "Impostor", domains: ["impostor.com"], variant: "icon", image: "img/3.png", ticker: "BT-A", exchange: "LSE" },
      { name: "Impostor HK", domains: ["impostor.hk"], variant: "icon", image: "img/5.png", ticker: "00700", exchange: "HKEX" },
      { name: "Impostor Unlisted", domains: ["impostor-unlisted.com"], variant: "icon", image: "img/9.png", ticker: "BT-A" },
      // The holder itself may add another spelling.
      { name: "BT Group", domains: ["bt.com"], variant: "icon", image: "img/2.png", ticker: "BT-A", exchange: "LSE" },
    ]);
    const later = await importFile("later.jsonl");
    expect(later.json().failures).toEqual([
      { line: 1, error: "ticker BT-A already belongs to another company as BT.A on LSE" },
      { line: 2, error: "ticker 00700 already belongs to another company as 0700 on HKEX" },
      { line: 3, error: "ticker BT-A already belongs to another company as BT.A" },
    ]);
    const bt = (await company("BT Group"))!;
    expect(
      (await platform.db.select().from(companyTickers).where(eq(companyTickers.companyId, bt.id)).all()).map((t) => t.ticker).sort(),
    ).toEqual(["BT-A", "BT.A"]);
  });

  it("stops at a CSV header with a column it does not know, before writing anything", async () => {
    writeFileSync(
      join(dir, "misspelt.csv"),
      "name,domains,variant,image,license,brand_colour,tickr\nMisspelt,misspelt.com,icon,img/0.png,MIT,#abcdef,MSP\n",
    );
    const result = await importFile("misspelt.csv");
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('line 1: the header row has an unknown column \\"license\\" (did you mean \\"licence\\"?)');
    expect(await company("Misspelt")).toBeUndefined();
  });

  it("refuses image URLs of hosts that are not public unless told, before connecting to them", async () => {
    let asked = 0;
    const counting = createServer((_, response) => {
      asked++;
      response.writeHead(200, { "content-type": "image/png" }).end();
    });
    let connections = 0;
    counting.on("connection", () => connections++);
    await new Promise<void>((resolve) => counting.listen(0, "127.0.0.1", resolve));
    const port = (counting.address() as { port: number }).port;
    try {
      write("private.jsonl", [
        { name: "Loopback", domains: ["loopback-url.com"], variant: "icon", image: `http://127.0.0.1:${port}/a.png` },
        { name: "Named", domains: ["named-url.com"], variant: "icon", image: `http://localhost:${port}/b.png` },
        { name: "Metadata", domains: ["metadata-url.com"], variant: "icon", image: "http://169.254.169.254/latest/meta-data/" },
        { name: "Mapped", domains: ["mapped-url.com"], variant: "icon", image: `http://[::ffff:127.0.0.1]:${port}/c.png` },
      ]);
      const result = await importFile("private.jsonl", []);
      expect(result.json()).toMatchObject({ created: 0, failed: 4 });
      const errors = (result.json().failures as Array<{ error: string }>).map((f) => f.error);
      expect(errors[0]).toBe(
        "image URL refused: 127.0.0.1 resolves to 127.0.0.1, which is not a public address (--allow-private-urls fetches it all the same)",
      );
      expect(errors[1]).toMatch(/^image URL refused: localhost resolves to (127\.0\.0\.1|::1), which is not a public address/);
      expect(errors[2]).toMatch(/^image URL refused: 169\.254\.169\.254 resolves to 169\.254\.169\.254/);
      expect(errors[3]).toMatch(/^image URL refused: ::ffff:\S+ resolves to/);
      expect([asked, connections]).toEqual([0, 0]);
    } finally {
      await new Promise((resolve) => counting.close(resolve));
    }
  });

  it("refuses a file that is not a regular file or is over 10 MB, and a URL whose body passes 10 MB, without reading it all", async () => {
    const fifo = join(dir, "img/fifo.png");
    execFileSync("mkfifo", [fifo]);
    truncateSync(join(dir, "img/11.png"), 11 * 1024 * 1024);
    write("special.jsonl", [
      { name: "Zero", domains: ["zero.com"], variant: "icon", image: "/dev/zero" },
      { name: "Fifo", domains: ["fifo.com"], variant: "icon", image: "img/fifo.png" },
      { name: "Huge", domains: ["huge.com"], variant: "icon", image: `${origin}/big` },
      { name: "Huge File", domains: ["huge-file.com"], variant: "icon", image: "img/11.png" },
      { name: "Fine", domains: ["fine.com"], variant: "icon", image: "img/10.png" },
    ]);
    const result = await importFile("special.jsonl");
    expect(result.json()).toMatchObject({ created: 1, failed: 4 });
    expect(result.json().failures).toEqual([
      { line: 1, error: "image is not a regular file: /dev/zero" },
      { line: 2, error: "image is not a regular file: img/fifo.png" },
      { line: 3, error: "image is larger than 10 MB" },
      { line: 4, error: "image is larger than 10 MB" },
    ]);
  }, 20_000);

  it("writes a batch in parts, holding no more converted images than its limit allows", async () => {
    const rows = Array.from({ length: 6 }, (_, i) => ({
      name: `Held ${i}`,
      domains: [`held-${i}.com`],
      variant: "icon",
      image: `img/${i}.png`,
    }));
    write("held.jsonl", rows);
    const sample = await pool.convert(new Uint8Array(await sharp(join(dir, "img/0.png")).toBuffer()));
    const size = sample.ok
      ? Object.values(sample.value.files).reduce((sum, file) => sum + (file?.byteLength ?? 0), sample.value.original.byteLength)
      : 0;
    let converted = 0;
    let written = 0;
    let mostHeld = 0;
    const writes: number[] = [];
    const counting: ImportWriter = {
      ...writer,
      write: async (batch) => {
        writes.push(batch.length);
        written += batch.filter((row) => row.image).length;
        return writer.write(batch);
      },
    };
    const report = await runImport(join(dir, "held.jsonl"), counting, {
      batchSize: 6,
      threads: 1,
      maxHeldBytes: 2 * size,
      convert: async (bytes) => {
        const prepared = await pool.convert(bytes);
        mostHeld = Math.max(mostHeld, ++converted - written);
        return prepared;
      },
    });
    expect(report).toMatchObject({ rows: 6, created: 6, failed: 0 });
    // Images of about `size` each: a part is written once two or three have gathered.
    expect(writes.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...writes)).toBeLessThanOrEqual(3);
    expect(mostHeld).toBeLessThanOrEqual(3);
  });

  it("writes a smaller first batch before the rest, when asked (the first start's example comes sooner)", async () => {
    write(
      "first.jsonl",
      // Images 0 to 5: a test above makes img/11.png too large.
      Array.from({ length: 12 }, (_, i) => ({
        name: `First ${i}`,
        domains: [`first-batch-${i}.com`],
        variant: "icon",
        image: `img/${i % 6}.png`,
      })),
    );
    const writes: number[] = [];
    const progress: number[] = [];
    const counting: ImportWriter = { ...writer, write: async (batch) => (writes.push(batch.length), writer.write(batch)) };
    const report = await runImport(join(dir, "first.jsonl"), counting, {
      batchSize: 5,
      firstBatchSize: 2,
      convert: pool.convert,
      onProgress: (r) => progress.push(r.rows),
    });
    expect(report).toMatchObject({ rows: 12, created: 12, failed: 0 });
    expect(writes).toEqual([2, 5, 5]);
    expect(progress).toEqual([2, 7, 12]);
  });

  it("prepares each row as the caller asks: its themes decided now, or left to its first lookup", async () => {
    write(
      "themes.jsonl",
      [0, 1, 2].map((i) => ({ name: `Themes ${i}`, domains: [`themes-${i}.com`], variant: "icon", image: `img/${i}.png` })),
    );
    const asked: string[] = [];
    const report = await runImport(join(dir, "themes.jsonl"), writer, {
      convert: pool.convert,
      prepareFor: (row) => (asked.push(row.domains[0]!), { themes: row.domains[0] === "themes-1.com" ? "now" : "on first lookup" }),
    });
    expect(report).toMatchObject({ rows: 3, created: 3, failed: 0 });
    expect(asked.sort()).toEqual(["themes-0.com", "themes-1.com", "themes-2.com"]);
    expect((await logoOf("Themes 0"))!.renditions.pending).toBe(true);
    expect((await logoOf("Themes 1"))!.renditions.pending).toBeUndefined();
    expect((await logoOf("Themes 2"))!.renditions.pending).toBe(true);
  });

  it("reads no more files ahead of the batch being written than the bytes it may hold", async () => {
    // Sixty files of 1 MB, ten to a batch, 2 MB allowed: the batch being written holds its ten,
    // the batches staged ahead read about what is left of the limit.
    write(
      "files.jsonl",
      Array.from({ length: 60 }, (_, i) => ({
        name: `File ${i}`,
        domains: [`file-${i}.com`],
        variant: "icon",
        image: `${origin}/mb/${i}`,
      })),
    );
    const tiny = await pool.convert(new Uint8Array(readFileSync(join(dir, "img/0.png"))));
    const counting: ImportWriter = { ...writer, write: async (batch) => writer.write(batch).finally(() => (rowsWritten += batch.length)) };
    const report = await runImport(join(dir, "files.jsonl"), counting, {
      batchSize: 10,
      maxHeldBytes: 2 * 1024 * 1024,
      convert: async () => tiny,
      allowPrivateUrls: true,
    });
    expect(report).toMatchObject({ rows: 60, created: 60, failed: 0 });
    expect(served).toBe(60);
    expect(mostHeldFiles).toBeLessThanOrEqual(10 + 3);
  });

  it("converts a stored logo of an older renditions version while staging, not one row at a time as it is written", async () => {
    write(
      "stale.jsonl",
      [0, 1, 2].map((i) => ({ name: `Stale ${i}`, domains: [`stale-${i}.com`], variant: "icon", image: `img/${i}.png` })),
    );
    await importFile("stale.jsonl");
    await platform.db
      .update(logos)
      .set({ renditions: sql`json_set(${logos.renditions}, '$.version', ${RENDITIONS_VERSION - 1})` })
      .where(sql`${logos.companyId} IN (SELECT id FROM companies WHERE name LIKE 'Stale %')`);
    const writes: number[] = [];
    const counting: ImportWriter = { ...writer, write: async (batch) => (writes.push(batch.length), writer.write(batch)) };
    const report = await runImport(join(dir, "stale.jsonl"), counting, { convert: pool.convert });
    expect(report).toMatchObject({ rows: 3, updated: 3, failed: 0 });
    expect(writes).toEqual([3]);
  });

  it("writes rows in the manifest's order when a row between brings back the stored file: the last for a logo ends on top, the first to claim a ticker keeps it", async () => {
    write("triple-first.jsonl", [{ name: "Triple", domains: ["triple.com"], variant: "icon", image: "img/3.png" }]);
    await importFile("triple-first.jsonl");
    // The stored file comes back between two new ones: staging finds it stored and skips its
    // conversion; by the time it is written, the row before has replaced it. That row claims a
    // ticker a later row claims too.
    write("triple.jsonl", [
      { name: "Triple", domains: ["triple.com"], variant: "icon", image: "img/4.png" },
      { name: "Triple", domains: ["triple.com"], variant: "icon", image: "img/3.png", ticker: "TRPL", exchange: "NYSE" },
      { name: "Triple", domains: ["triple.com"], variant: "icon", image: "img/5.png" },
      { name: "Late Claimant", domains: ["late-claimant.com"], variant: "icon", image: "img/6.png", ticker: "TRPL", exchange: "NYSE" },
    ]);
    const report = await runImport(join(dir, "triple.jsonl"), writer, { convert: pool.convert });
    expect(report).toMatchObject({
      rows: 4,
      updated: 3,
      failed: 1,
      failures: [{ line: 4, error: "ticker TRPL already belongs to another company on NYSE" }],
    });
    const stored = await platform.db.get<{ hash: string }>(
      sql`SELECT lower(hex(source_hash)) AS hash FROM logos WHERE company_id = ${(await company("Triple"))!.id}`,
    );
    const last = createHash("sha256")
      .update(readFileSync(join(dir, "img/5.png")))
      .digest("hex");
    expect(stored?.hash).toBe(last);
    expect((await findCompanyByTicker(platform.db, "NYSE:TRPL"))?.companyName).toBe("Triple");
  });

  it("stops at storage that refuses its objects, records nothing past the last batch written, and resumes there", async () => {
    const s3 = await startFakeR2S3();
    // The stand-in refuses every object of a key with "put-fails" in it: the third row's.
    const failing = await startImportWriter({
      persistTo: state.dir,
      s3: {
        endpoint: s3.url,
        bucket: FAKE_S3.bucket,
        accessKeyId: FAKE_S3.accessKeyId,
        secretAccessKey: FAKE_S3.secretAccessKey,
        retries: 0,
      },
    });
    try {
      write(
        "storage.jsonl",
        [1, 2, 3, 4].map((i) => ({
          name: `Stored ${i}`,
          domains: [i === 3 ? "put-fails-3.com" : `stored-${i}.com`],
          variant: "icon",
          image: `img/${i}.png`,
        })),
      );
      const args = [join(dir, "storage.jsonl"), "--batch-size", "2", "--persist-to", state.dir];
      const stopped = await inProcess((io) => importCommand(args, io, { writer: failing, pool }));
      expect(stopped.status).toBe(1);
      expect(JSON.parse(stopped.stderr.trim().split("\n").at(-1)!).error.message).toMatch(
        /^stopped at line 3: object storage write failed: .*answered 500.*Run the import again once storage answers/,
      );
      expect(await company("Stored 2")).toBeDefined();
      expect(await company("Stored 4")).toBeUndefined();

      const resumed = await inProcess((io) => importCommand(args, io, { writer, pool }));
      expect(resumed.stderr).toContain("Resuming an interrupted import after line 2.");
      expect(resumed.status).toBe(0);
      expect(JSON.parse(resumed.stdout)).toMatchObject({ rows: 4, created: 4, failed: 0 });
      expect((await company("Stored 3"))?.name).toBe("Stored 3");
    } finally {
      await failing.stop();
      s3.server.close();
    }
  });
});

describe("the import writer", () => {
  it("answers only the importer that started it: another process on the machine gets 401 and writes nothing", async () => {
    const before = (await platform.db.select({ n: sql<number>`count(*)` }).from(companies).get())!.n;
    for (const headers of [{}, { authorization: "Bearer " }, { authorization: `Bearer ${"0".repeat(64)}` }] as Record<string, string>[]) {
      for (const [path, body] of [
        ["/source-hashes", JSON.stringify({ keys: [] })],
        ["/logos", "x"],
      ] as const) {
        const response = await fetch(`${writer.url}${path}`, { method: "POST", headers, body });
        expect(response.status, `${path} ${JSON.stringify(headers)}`).toBe(401);
      }
    }
    expect((await platform.db.select({ n: sql<number>`count(*)` }).from(companies).get())!.n).toBe(before);
    // The importer itself is answered.
    expect(await writer.sourceHashes([{ domains: ["nobody.example"], variant: "icon", sourceSet: "manifest" }])).toEqual([null]);
  });
});
