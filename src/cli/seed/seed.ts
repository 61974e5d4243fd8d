import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { importManifest } from "../importer/importManifest";
import type { PlatformOptions } from "../platform";
import { projectRoot } from "../platform";
import { buildSeedCatalogue, loadIconSets, readBrands } from "./catalogue";

export const defaultSeedDir = join(projectRoot, ".wrangler", "seed");

/**
 * Writes the seed catalogue as an ordinary import manifest (JSON Lines) with its SVG files,
 * then imports it like any other manifest: the seed exercises the importer, not a side door.
 */
export function writeSeedManifest(dir = defaultSeedDir): { manifest: string; companies: number; logos: number } {
  const companies = buildSeedCatalogue(readBrands(), loadIconSets());
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });

  const rows: string[] = [];
  for (const company of companies) {
    for (const logo of company.logos) {
      writeFileSync(join(dir, logo.file), logo.svg);
      rows.push(
        JSON.stringify({
          name: company.name,
          domains: company.domains,
          ticker: company.ticker,
          exchange: company.exchange,
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
  writeFileSync(manifest, `${rows.join("\n")}\n`);
  return { manifest, companies: companies.length, logos: rows.length };
}

export async function seedCatalogue(options: PlatformOptions & { dir?: string }) {
  const { manifest, companies, logos } = writeSeedManifest(options.dir);
  const report = await importManifest(manifest, options);
  return { companies, logos, ...report };
}
