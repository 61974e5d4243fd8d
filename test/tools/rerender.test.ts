import { eq } from "drizzle-orm";
import sharp from "sharp";
import { beforeAll, describe, expect, it } from "vitest";
import { logos, retiredObjects } from "../../schema";
import { logosInIdOrder } from "../../src/catalogue/logos";
import { type CompanyLogoInput, importCompanyLogo } from "../../src/catalogue/importLogo";
import { prepareLogo } from "../../tools/importer/prepare";
import { withoutVector } from "../../src/catalogue/preparedImage";
import { LEGACY_RENDITIONS, logoObjectKeys, renditionKey, vectorKey } from "../../src/images/objectKeys";
import type { Logo } from "../../src/catalogue/entities";
import { sha256Hex } from "../../src/lib/encoding";
import { ok } from "../../src/lib/errors";
import { RENDITIONS_VERSION } from "../../src/images/renditions";
import type { Platform } from "../../tools/platform";
import { rerenderCommand } from "../../tools/rerender/command";
import { inProcess, platformForThisFile, tool } from "./helpers";
import { ico } from "../fixtures/icons";
import { writtenObjectKeys } from "../helpers/objects";

/** The file's state, and a platform kept open on it for the test's own reads and writes. */
const file = platformForThisFile();

const mark = (fill: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100" width="100" height="100"><circle cx="50" cy="50" r="40" fill="${fill}"/></svg>`;

beforeAll(async () => {
  // The catalogue as the previous renditions version left it: a master, a greyscale and, for
  // dark and light logos, inverted renditions. One logo's original is gone: it cannot be re-rendered.
  await withFilePlatform(async ({ db, bucket }) => {
    for (const [name, fill] of [
      ["black", "#000000"],
      ["white", "#ffffff"],
      ["gone", "#1a1f71"],
    ] as const) {
      const svg = new TextEncoder().encode(mark(fill));
      const prepared = await prepareLogo(svg);
      if (!prepared.ok) throw new Error(prepared.error);
      const input: CompanyLogoInput = {
        name,
        domains: [`${name}.com`],
        aliases: [],
        prominence: 0,
        variant: "icon",
        sourceSet: "manifest",
        licence: "CC0-1.0",
        sourceHash: await sha256Hex(svg),
      };
      const written = await importCompanyLogo(db, bucket, input, async () => ok(prepared.logo));
      if (!written.ok) throw new Error(written.error.message);
    }
    for (const logo of await logosInIdOrder(db)) {
      await asLegacy(db, bucket, logo);
      if (logo.masterKey.includes("gone.com")) await bucket.delete(logo.originalKey);
    }
  });
});

const withFilePlatform = <T>(job: (platform: Platform) => Promise<T>): Promise<T> => job(file.platform);

/**
 * The program runs once as a process (its exit code and output, the first test); the other runs
 * are its command in this process on the file's platform, which spares a process loading tsx and
 * wrangler, and a runtime started for the storage, each time.
 */
const rerender = (...args: string[]) => inProcess((io) => rerenderCommand([...args, "--persist-to", file.dir], io, file.platform.borrow));

/** A logo's objects and row as the previous renditions version left them. */
async function asLegacy(db: Platform["db"], bucket: R2Bucket, logo: Logo) {
  await bucket.delete(logoObjectKeys(logo).filter((key) => key !== logo.masterKey && key !== logo.originalKey));
  for (const legacy of ["grey", "inverted"]) await bucket.put(`${logo.masterKey.slice(0, -4)}.${legacy}.png`, new Uint8Array([1]));
  await db.update(logos).set({ renditions: LEGACY_RENDITIONS }).where(eq(logos.id, logo.id));
}

const snapshot = () =>
  withFilePlatform(async ({ db, bucket }) => ({
    logos: (await logosInIdOrder(db)).sort((a, b) => a.id - b.id),
    objects: (await bucket.list({ prefix: "logos/" })).objects.map((o) => o.key).sort(),
    retired: (await db.select().from(retiredObjects).all()).map((r) => r.key).sort(),
  }));

describe("npm run rerender", () => {
  it("re-renders logos made by an older renditions version from their originals, and a second run does nothing", async () => {
    const first = await tool("rerender", [], file.dir);
    expect(first.status).toBe(2);
    expect(first.json()).toMatchObject({
      logos: 3,
      updated: 2,
      unchanged: 0,
      failed: 1,
      version: RENDITIONS_VERSION,
      failures: [{ error: expect.stringMatching(/^original .* is missing$/) }],
    });
    expect(first.stderr).toContain("re-rendering 3 logos");
    expect(first.stderr).toContain("3/3 logos");

    const after = await snapshot();
    const byDomain = (domain: string) => after.logos.find((l) => l.masterKey.includes(domain))!;
    expect(byDomain("black.com").renditions).toEqual({
      version: RENDITIONS_VERSION,
      light: false,
      dark: true,
      plain: "master",
      vector: true,
    });
    expect(byDomain("white.com").renditions).toEqual({
      version: RENDITIONS_VERSION,
      light: true,
      dark: false,
      plain: "light",
      vector: true,
    });
    expect(byDomain("gone.com").renditions.version).toBe(0);
    // Every object is one a row names, or a legacy rendition of a re-rendered logo, retired:
    // deleted two days on, once no redirect cached before can lead to it.
    const referenced = after.logos.filter((l) => l.renditions.version > 0).flatMap((l) => writtenObjectKeys(l));
    const legacy = ["black.com", "white.com"].flatMap((domain) =>
      ["grey", "inverted"].map((name) => `${byDomain(domain).masterKey.slice(0, -4)}.${name}.png`),
    );
    expect(after.retired).toEqual(expect.arrayContaining(legacy));
    const gone = byDomain("gone.com");
    expect(after.objects).toEqual(
      [
        ...referenced,
        ...legacy,
        gone.masterKey,
        renditionKey(gone.masterKey, "grey", 0),
        `${gone.masterKey.slice(0, -4)}.inverted.png`,
      ].sort(),
    );

    const second = await rerender();
    expect(second.json()).toMatchObject({ logos: 1, updated: 0, failed: 1 });
    expect(await snapshot()).toEqual(after);
  });

  it("re-renders discovered ICO and AVIF logos, which the importer does not take, keeping their originals", async () => {
    const colour: [number, number, number] = [0x1a, 0x1f, 0x71];
    const originals = {
      ico: ico([{ bmp: { size: 32, rgba: [...colour, 255] } }]),
      avif: new Uint8Array(
        await sharp({ create: { width: 64, height: 32, channels: 3, background: "#1a1f71" } })
          .avif()
          .toBuffer(),
      ),
    };
    // As discovery stores them: the file as it came, a PNG master of its pixels.
    await withFilePlatform(async ({ db, bucket }) => {
      for (const [format, original] of Object.entries(originals)) {
        const { width, height } = format === "ico" ? { width: 32, height: 32 } : { width: 64, height: 32 };
        const pixels = await sharp({
          create: { width, height, channels: 4, background: { r: colour[0], g: colour[1], b: colour[2], alpha: 1 } },
        })
          .png()
          .toBuffer();
        const prepared = await prepareLogo(new Uint8Array(pixels));
        if (!prepared.ok) throw new Error(prepared.error);
        const input: CompanyLogoInput = {
          name: format,
          domains: [`${format}-icon.com`],
          aliases: [],
          prominence: 0,
          variant: "icon",
          sourceSet: "discovered",
          licence: "unknown",
          sourceHash: await sha256Hex(original),
        };
        const written = await importCompanyLogo(db, bucket, input, async () => ok({ ...prepared.logo, format, original }));
        if (!written.ok) throw new Error(written.error.message);
        await asLegacy(db, bucket, (await logosInIdOrder(db)).find((l) => l.id === written.value.logoId)!);
      }
    });

    const result = await rerender();
    expect(result.json()).toMatchObject({
      logos: 3,
      updated: 2,
      failed: 1,
      failures: [{ error: expect.stringMatching(/^original .* is missing$/) }],
    });
    await withFilePlatform(async ({ db, bucket }) => {
      for (const [format, original] of Object.entries(originals)) {
        const logo = (await logosInIdOrder(db)).find((l) => l.masterKey.includes(`${format}-icon.com`))!;
        expect(logo).toMatchObject({ format, renditions: { version: RENDITIONS_VERSION } });
        expect(logo.originalKey).toMatch(new RegExp(`\\.original\\.${format}$`));
        expect(new Uint8Array(await (await bucket.get(logo.originalKey))!.arrayBuffer())).toEqual(original);
        const master = await sharp(new Uint8Array(await (await bucket.get(logo.masterKey))!.arrayBuffer()))
          .raw()
          .toBuffer({ resolveWithObject: true });
        expect(master.info).toMatchObject(format === "ico" ? { width: 32, height: 32 } : { width: 64, height: 32 });
        if (format === "ico") expect([...master.data.subarray(0, 3)]).toEqual(colour);
      }
    });
  });

  it("re-renders a discovered SVG as discovery stores it: without a vector, a stranger's markup never served", async () => {
    const svg = new TextEncoder().encode(mark("#0a7d5a"));
    let logoId = 0;
    await withFilePlatform(async ({ db, bucket }) => {
      const prepared = await prepareLogo(svg);
      if (!prepared.ok) throw new Error(prepared.error);
      const input: CompanyLogoInput = {
        name: "stranger",
        domains: ["stranger-svg.com"],
        aliases: [],
        prominence: 0,
        variant: "icon",
        sourceSet: "discovered",
        licence: "unknown",
        sourceHash: await sha256Hex(svg),
      };
      const written = await importCompanyLogo(db, bucket, input, async () => ok(withoutVector(prepared.logo)));
      if (!written.ok) throw new Error(written.error.message);
      logoId = written.value.logoId;
      await asLegacy(db, bucket, (await logosInIdOrder(db)).find((l) => l.id === logoId)!);
    });

    const result = await rerender();
    expect(result.json()).toMatchObject({ logos: 2, updated: 1, failed: 1 });
    await withFilePlatform(async ({ db, bucket }) => {
      const logo = (await logosInIdOrder(db)).find((l) => l.id === logoId)!;
      expect(logo).toMatchObject({ format: "svg", sourceSet: "discovered", renditions: { version: RENDITIONS_VERSION, vector: false } });
      expect(await bucket.head(vectorKey(logo.masterKey))).toBeNull();
    });
  });

  it("exits 1 on a mistake in its command line, which ran nothing: 2 says some logo failed", async () => {
    const result = await rerender("--concurrency", "0");
    expect(result.status).toBe(1);
    expect(JSON.parse(result.stderr.trim().split("\n").at(-1)!).error.message).toMatch(/^usage: npm run rerender -- /);
  });
});
