import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ImportManifestOptions, importManifest } from "../importer/importManifest";
import { projectRoot } from "../platform";
import type { CompanyLogoInput } from "../../src/catalogue/importLogo";
import type { PrepareOptions } from "../../src/catalogue/preparedImage";
import { WALL_DOMAINS } from "../../src/web/wall";
import { buildSeedCatalogue, loadIconSets, readBrands } from "./catalogue";

export const defaultSeedDir = join(projectRoot, ".wrangler", "seed");

/** The lookup `npm start` suggests trying; its company is seeded first. */
export const EXAMPLE_DOMAIN = "github.com";
/** How seeding says that the example's company is in (npm start offers the lookup then). */
export const EXAMPLE_SEEDED = `seeding: ${EXAMPLE_DOMAIN} and the best-known companies are in`;

/**
 * Writes the seed catalogue as an ordinary import manifest (JSON Lines) with its SVG files,
 * then imports it like any other manifest: the seed exercises the importer, not a side door.
 * The example `npm start` prints comes first, then better-known companies before others, so
 * that a server started beside the seeding finds them soonest. The files are rewritten only
 * when the catalogue changed, so that an interrupted seeding resumes where it stopped (the
 * importer knows a manifest by its path, size and time).
 */
export function writeSeedManifest(dir = defaultSeedDir): { manifest: string; companies: number; logos: number } {
  const companies = buildSeedCatalogue(readBrands(), loadIconSets())
    .map((company, index) => ({ company, index, example: company.domains.includes(EXAMPLE_DOMAIN) }))
    .sort((a, b) => Number(b.example) - Number(a.example) || b.company.prominence - a.company.prominence || a.index - b.index)
    .map(({ company }) => company);
  const files = new Map<string, string>();
  const rows: string[] = [];
  for (const company of companies) {
    for (const logo of company.logos) {
      files.set(logo.file, logo.svg);
      rows.push(
        JSON.stringify({
          name: company.name,
          domains: company.domains,
          ticker: company.ticker,
          exchange: company.exchange,
          isins: company.isins.length > 0 ? company.isins : undefined,
          crypto: company.crypto.length > 0 ? company.crypto : undefined,
          aliases: company.aliases,
          brand_color: company.brandColor,
          prominence: company.prominence,
          variant: logo.variant,
          image: logo.file,
          source_set: logo.sourceSet,
          licence: logo.licence,
        }),
      );
    }
  }
  const manifest = join(dir, "manifest.jsonl");
  const text = `${rows.join("\n")}\n`;
  const digest = createHash("sha256").update(text);
  for (const [file, svg] of files) digest.update(file).update(svg);
  const digestFile = join(dir, "catalogue.sha256");
  const fingerprint = digest.digest("hex");
  if (!existsSync(digestFile) || readFileSync(digestFile, "utf8") !== fingerprint) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    for (const [file, svg] of files) writeFileSync(join(dir, file), svg);
    writeFileSync(manifest, text);
    // Last: a folder interrupted while being written is never taken for a complete one.
    writeFileSync(digestFile, fingerprint);
  }
  return { manifest, companies: companies.length, logos: rows.length };
}

/**
 * Locally, a logo's light and dark renditions are decided by its first lookup: that work was more
 * than half of a seeding's, for logos most of which a developer never looks up
 * (src/catalogue/themesOnDemand.ts). The ones a first start shows at once, the landing page's
 * wall and the example lookup, are decided now, so that page and that lookup answer at once. A
 * deployed catalogue (`--remote`) has every logo's decided now, sparing its Worker the CPU.
 */
const shownFirst = new Set([EXAMPLE_DOMAIN, ...WALL_DOMAINS]);
export const themesWhenLocal = (row: Pick<CompanyLogoInput, "domains">): PrepareOptions => ({
  themes: row.domains.some((domain) => shownFirst.has(domain)) ? "now" : "on first lookup",
});

export async function seedCatalogue(options: Omit<ImportManifestOptions, "label"> & { dir?: string }) {
  const { manifest, companies, logos } = writeSeedManifest(options.dir);
  // Smaller batches than a bulk load's: beside a running server, logos show up sooner. The
  // first batch, smaller still, holds the example npm start suggests: say when it can be tried.
  let first = true;
  const onProgress = ({ rows, created }: { rows: number; created: number }) => {
    if (!first || rows === 0) return;
    first = false;
    if (created > 0) (options.stream ?? process.stderr).write(`${EXAMPLE_SEEDED}; the rest follow\n`);
  };
  const report = await importManifest(manifest, {
    label: "seeding",
    batchSize: 100,
    firstBatchSize: 20,
    onProgress,
    prepareFor: options.remote ? undefined : themesWhenLocal,
    ...options,
  });
  return { companies, logos, ...report };
}
