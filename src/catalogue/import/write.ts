import type { SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { logos } from "../../../schema";
import { derivedRenditions, renditionKey, vectorKey } from "../../images/objectKeys";
import type { CatalogueDb } from "../../lib/db";
import { isTransientDatabaseFailure, rootCause } from "../../lib/dependencies";
import { fail, ok, type Result } from "../../lib/errors";
import { retiredAmong, retirements, sweepRetired } from "../retiredObjects";
import { log } from "../../lib/log";
import type { ObjectStore } from "./inputs";
import type { WritePlan } from "./plan";
import { ORIGINAL, renditionPutOptions, type StoredImage } from "./storedImage";

/**
 * Carrying out a plan: objects first, under fresh content-addressed keys, then the rows in one
 * D1 batch (one transaction) that also retires the objects replaced; a failed batch deletes what
 * was put. Every logo row and object is written from here.
 */
/** Objects first, then the rows in one batch, the replaced objects retired in it (retiredObjects.ts). */
export async function writePlan(db: CatalogueDb, bucket: ObjectStore, plan: WritePlan, now: Date): Promise<Result<true>> {
  if (plan.statements.length === 0) return ok(true);
  const puts = plan.logos.filter((logo) => logo.put);
  // Keys the catalogue already references are never deleted on failure: an image may come
  // back under the keys it had. Nor are keys another write still needs: those of an image
  // retired (redirects cached before its replacement lead to them for two days), and those a
  // racing writer's committed rows name (the witness finds them, content-addressed as they
  // are). Whatever cannot be told stays: an orphan costs storage, a missing object breaks a logo.
  const unwind = async () => {
    if (plan.witness && (await rowsWritten(db, plan.witness))) return;
    const keys = puts.flatMap((logo) => logo.keys.filter((key) => !logo.storedKeys.includes(key)));
    const retired = await retiredAmong(db, keys);
    await deleteAll(
      bucket,
      keys.filter((key) => !retired.has(key)),
    );
  };
  const stored = await putImages(
    bucket,
    puts.map((logo) => logo.put!),
  );
  if (!stored.ok) {
    await unwind().catch(() => undefined);
    return stored;
  }

  // The replaced images' objects are unreferenced once the batch commits; redirects cached before it still lead to them.
  const replaced = plan.logos.flatMap((logo) => logo.storedKeys.filter((key) => !logo.keys.includes(key)));
  const statements = [
    ...plan.statements,
    ...retirements(
      db,
      replaced,
      puts.flatMap((logo) => logo.keys),
      now,
    ),
  ];
  let results: unknown[];
  try {
    results = await db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  } catch (error) {
    await unwind().catch(() => undefined);
    return fail(isTransientDatabaseFailure(error) ? "unavailable" : "internal", `catalogue write failed: ${rootCause(error)}`);
  }

  // New rows reported their ids through RETURNING.
  const returnedId = (index: number) => (results[index] as Array<{ id: number }>)[0]!.id;
  for (const decision of plan.decisions) {
    if (!decision.ok) continue;
    const { company, logo } = decision.value;
    if (company.id === undefined) company.id = returnedId(company.createdBy!);
    if (logo.id === undefined) logo.id = returnedId(logo.createdBy!);
  }

  await sweep(db, bucket, now);
  return ok(true);
}

/**
 * Whether a write that reported an error was applied all the same: over a remote connection
 * D1 can apply a batch and the answer be lost. Its new objects must then stay, or its rows
 * would name deleted objects, and a retry, finding the rows unchanged, would not put them
 * again. A batch is one transaction, so one row it writes tells: found by its indexed slot and
 * what names the new keys (planWrites' witness), it also tells of a racing writer's row that
 * names the same content-addressed keys. When even that cannot be read, the objects stay: an
 * orphan costs storage, a missing object breaks a logo.
 */
export async function rowsWritten(db: CatalogueDb, row: SQL | undefined): Promise<boolean> {
  try {
    return (await db.select({ id: logos.id }).from(logos).where(row).limit(1)).length > 0;
  } catch {
    return true;
  }
}

/** At most this many puts at once: a write of hundreds of logos puts thousands of objects. */
export const PUTS_AT_ONCE = 32;

export async function putImages(bucket: ObjectStore, images: StoredImage[]): Promise<Result<true>> {
  const objects = images.flatMap(({ keys, image }) => {
    const png = renditionPutOptions(image);
    const original = { httpMetadata: ORIGINAL };
    const { version } = image.renditions;
    const all: Array<[key: string, body: Uint8Array | undefined | null, options: R2PutOptions]> = [
      [keys.masterKey, image.files.master, png],
      ...derivedRenditions.map((rendition): [string, Uint8Array | undefined, R2PutOptions] => [
        renditionKey(keys.masterKey, rendition, version),
        image.files[rendition],
        png,
      ]),
      [
        vectorKey(keys.masterKey, version),
        image.renditions.vector ? image.vector : null,
        { httpMetadata: { contentType: "image/svg+xml" } },
      ],
      [keys.originalKey, image.original, original],
    ];
    return all.filter((object): object is [string, Uint8Array, R2PutOptions] => Boolean(object[1]));
  });
  // After a failure no put starts, and the answer waits for those under way: an unwind that
  // ran beside them would leave their objects behind.
  let next = 0;
  let failure: unknown;
  await Promise.all(
    Array.from({ length: Math.min(PUTS_AT_ONCE, objects.length) }, async () => {
      while (failure === undefined && next < objects.length) {
        const [key, body, options] = objects[next++]!;
        await bucket.put(key, body, options).catch((error: unknown) => {
          failure ??= error;
        });
      }
    }),
  );
  // The objects are this write's own bytes: a store that refuses them is the store's failure.
  if (failure !== undefined) return fail("unavailable", `object storage write failed: ${(failure as Error).message}`);
  return ok(true);
}

/** Retired objects whose time has come go after a write; a sweep that fails is the next write's. */
export async function sweep(db: CatalogueDb, bucket: ObjectStore, now: Date): Promise<void> {
  await sweepRetired(db, bucket, now).catch((error) => log.error("catalogue.retired_sweep_failed", { error }));
}

/** R2 deletes at most 1,000 keys a call. */
export async function deleteAll(bucket: ObjectStore, keys: string[]): Promise<void> {
  for (let at = 0; at < keys.length; at += 1000) await bucket.delete(keys.slice(at, at + 1000));
}
