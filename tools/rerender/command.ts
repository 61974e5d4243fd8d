/** What `npm run rerender` does (../rerender.ts): see there. */
import { SingleBar } from "cli-progress";
import { sql } from "drizzle-orm";
import { logos } from "../../schema";
import { replaceLogoImage } from "../../src/catalogue/importLogo";
import { withoutVector } from "../../src/catalogue/preparedImage";
import { DISCOVERED_SOURCE_SET } from "../../src/catalogue/provenance";
import { logosInIdOrder } from "../../src/catalogue/logos";
import type { Logo } from "../../src/catalogue/entities";
import { RENDITIONS_VERSION } from "../../src/images/renditions";
import type { Db } from "../../src/lib/db";
import { type CommandIo, parseCommandLine, processIo, storageOptions, UsageError, wholeNumber } from "../args";
import { prepareOriginal } from "../importer/prepare";
import { openPlatform, type Platform, type PlatformOptions } from "../platform";

const BATCH = 50;
const outOfDate = sql`json_extract(${logos.renditions}, '$.version') < ${RENDITIONS_VERSION}`;

interface Report {
  logos: number;
  updated: number;
  unchanged: number;
  failed: number;
  failures: Array<{ logoId: number; error: string }>;
}

async function rerender(
  db: Db,
  bucket: R2Bucket,
  concurrency: number,
  onLogo: (report: Report) => void,
  onFailure: (failure: Report["failures"][number]) => void,
): Promise<Report> {
  const report: Report = { logos: 0, updated: 0, unchanged: 0, failed: 0, failures: [] };
  const fail = (logoId: number, error: string) => {
    const failure = { logoId, error };
    report.failed++;
    report.failures.push(failure);
    onFailure(failure);
  };
  const one = async (logo: Logo) => {
    try {
      const original = await bucket.get(logo.originalKey);
      if (!original) return fail(logo.id, `original ${logo.originalKey} is missing`);
      const prepared = await prepareOriginal(logo.format, new Uint8Array(await original.arrayBuffer()));
      if (!prepared.ok) return fail(logo.id, prepared.error);
      // A discovered SVG is a stranger's markup: stored without a vector, as discovery stores it.
      const image = logo.sourceSet === DISCOVERED_SOURCE_SET ? withoutVector(prepared.logo) : prepared.logo;
      const result = await replaceLogoImage(db, bucket, logo, image);
      if (result.ok) report[result.value === "unchanged" ? "unchanged" : "updated"]++;
      else fail(logo.id, result.error.message);
    } catch (error) {
      fail(logo.id, (error as Error).message);
    } finally {
      report.logos++;
      onLogo(report);
    }
  };

  // By id, from where the last batch ended: a logo that fails stays out of date and is not
  // asked for again in this run.
  let after = 0;
  for (;;) {
    const batch = await logosInIdOrder(db, { where: outOfDate, after, limit: BATCH });
    if (batch.length === 0) break;
    after = batch.at(-1)!.id;
    const queue = [...batch];
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let logo = queue.shift(); logo; logo = queue.shift()) await one(logo);
      }),
    );
  }
  report.failures.sort((a, b) => a.logoId - b.logoId);
  return report;
}

/**
 * `npm run rerender` as a function: the JSON summary on stdout, progress and failures on stderr,
 * and the exit code (0; 2 when some logo failed; 1 when it could not run). Tests call it
 * in-process; the program runs it once.
 */
export async function rerenderCommand(
  argv: string[],
  io: CommandIo = processIo,
  open: (options: PlatformOptions) => Promise<Platform> = openPlatform,
): Promise<number> {
  try {
    const { values, positionals } = parseCommandLine(argv, {
      ...storageOptions,
      concurrency: { type: "string", default: "4" },
    });
    const usage = "usage: npm run rerender -- [--remote] [--persist-to DIR] [--concurrency 1-32]";
    if (positionals.length > 0) throw new UsageError(usage);
    const concurrency = wholeNumber(values.concurrency, usage, 1, 32);
    const platform = await open({ remote: values.remote, persistTo: values["persist-to"] });
    const started = Date.now();
    const bar = io.stderr.isTTY
      ? new SingleBar({
          stream: io.stderr as NodeJS.WriteStream,
          format: "re-rendering {bar} {value}/{total} logos | {rate} logos/s | ETA {eta_formatted} | {failed} failed",
          hideCursor: true,
        })
      : undefined;
    try {
      const [{ total }] = (await platform.db.select({ total: sql<number>`count(*)` }).from(logos).where(outOfDate).all()) as [
        { total: number },
      ];
      bar?.start(total, 0, { rate: "0.0", failed: 0 });
      if (!bar) io.stderr.write(`re-rendering ${total} logos\n`);
      const report = await rerender(
        platform.db,
        platform.bucket,
        concurrency,
        (r) => {
          const rate = (r.logos / ((Date.now() - started) / 1000)).toFixed(1);
          bar?.update(r.logos, { rate, failed: r.failed });
          if (!bar && (r.logos % 100 === 0 || r.logos === total))
            io.stderr.write(`${r.logos}/${total} logos, ${rate}/s, ${r.failed} failed\n`);
        },
        ({ logoId, error }) => io.stderr.write(`${bar ? "\r\x1b[K" : ""}logo ${logoId}: ${error}\n`),
      );
      bar?.stop();
      io.stdout.write(
        `${JSON.stringify({ ...report, version: RENDITIONS_VERSION, seconds: Math.round((Date.now() - started) / 100) / 10 })}\n`,
      );
      return report.failed > 0 ? 2 : 0;
    } finally {
      bar?.stop();
      await platform.dispose();
    }
  } catch (error) {
    io.stderr.write(`${JSON.stringify({ error: { message: (error as Error).message } })}\n`);
    // Nothing ran: 2 would say that some logo could not be re-rendered.
    return 1;
  }
}
