import { Hono } from "hono";
import { z } from "zod";
import { DISCOVERED_SOURCE_SET, logoSourceOf } from "../catalogue/provenance";
import { namesGrey } from "../catalogue/logos";
import { takedownOf, takenDownMessage } from "../catalogue/takedowns";
import type { AppEnv } from "../lib/context";
import { makeGrey } from "../images/greyOnDemand";
import { isVectorKey, sourceSetOfKey, vectorKey } from "../images/objectKeys";
import { MAX_OUTPUT_WIDTH, MIME_TYPES, type OutputFormat, scaledHeight, transformImage, withinHeight } from "../images/transform";
import { asciiBytes, isolateByteCache, isolateCache, MAP_ENTRY_BYTES, objectBytes } from "../lib/isolateCaches";
import { domainCacheTag } from "../lib/cacheTags";
import { createDb } from "../lib/db";
import { cachedResponse, dependency, storeResponse } from "../lib/dependencies";
import { firstMessage, integerParam } from "../lib/params";
import { densityOf, densityRule, imageParams } from "../images/params";
import { plainText } from "../lib/responses";
import { decodeAssetKey, encodeAssetKey } from "../images/assetUrls";
import { checkAssetSignature } from "../images/signedUrls";
import { SVG_HEADERS } from "../images/svgPolicy";
import { ladderDown, ladderUp, scaleDownTo } from "../images/widths";

/**
 * GET /assets/{base64urlKey} (spec section 3): public image bytes of a logo object, immutable
 * under their URL (keys are content-addressed).
 *
 *   maxWidth  1-3200, scale down only: a value at or above the stored width (times dpr), or
 *             none, serves the stored size; a smaller one scales down
 *   width     1-3200, this width (may enlarge): what lookups redirect to
 *   dpr       1-3 (or retina=true for 2): the width times the density, never past the stored width
 *   format    png (default), webp, avif, jpg, svg (the sanitised vector, where the logo has one)
 *   theme     light or dark: the page a jpg is flattened onto (white without it)
 *   expires, signature
 *             a URL this Worker signed: a time-limited one (three-tool get_logo) answers 403
 *             once expired or when any part of it was changed; a lookup's redirect to a
 *             width between the ladder's rungs is signed without expiry to get that exact width
 *
 * Anyone can call this route, so it renders a bounded set of images per object: any other
 * parameter is refused, unsigned widths are rounded to a ladder (src/images/widths.ts), and answers are
 * cached under what they are (key, width, format, page), never under the URL as sent.
 */
const IMMUTABLE = "public, max-age=31536000, immutable";
const recent = isolateByteCache<{ body: ArrayBuffer; headers: [string, string][] }>({
  name: "assets.recent",
  holds: "an asset answer's bytes and headers, by what it is (key, width, format, page)",
  capacity: 4 * 1024 * 1024,
  ofDomain: (id, domain) => domainOfAsset(decodeAssetKey(id.slice(CACHE_ORIGIN.length + 1).split("/")[0] ?? "")) === domain,
});

/** The company's primary domain an object's key names (`logos/<domain>/…`): what a takedown or a purge of it concerns. */
const domainOfAsset = (key: string | null) => (key === null ? null : (key.split("/")[1] ?? null));
const MAX_WIDTH = MAX_OUTPUT_WIDTH;
// v3: an entry's Content-Type is the type made (v2's was the type asked for).
const CACHE_ORIGIN = "https://assets.logo-lookup.internal/v3";

const query = z
  .strictObject(
    {
      maxWidth: integerParam("maxWidth", 1, MAX_WIDTH).optional(),
      width: integerParam("width", 1, MAX_WIDTH).optional(),
      ...imageParams,
      expires: z.string().optional(),
      signature: z.string().optional(),
    },
    { error: (issue) => (issue.code === "unrecognized_keys" ? `Unknown parameter: ${issue.keys[0]}` : undefined) },
  )
  .refine((q) => q.maxWidth === undefined || q.width === undefined, { message: "Invalid maxWidth: give maxWidth or width, not both" })
  .refine(...densityRule);

const notFound = () => plainText("Not found", 404);

export const assets = new Hono<AppEnv>();

// Public bytes without credentials (spec 3), so any page may read them. A lookup's redirect
// leads here, and browsers check CORS again on the answer a redirect leads to: without this, a
// script's fetch of a lookup, or a canvas drawing the logo, failed although the 302 allowed it.
assets.use("/*", async (c, next) => {
  await next();
  c.res.headers.set("Access-Control-Allow-Origin", "*");
});

assets.on(["GET", "HEAD"], "/:key", async (c) => {
  const key = decodeAssetKey(c.req.param("key"));
  if (key === null) return notFound();
  // A taken-down domain's objects are refused before any cache answers (docs/corrections.md#takedowns).
  const domain = domainOfAsset(key)!;
  const takenDown = await takedownOf(c.var.ctx.db, domain);
  if (takenDown !== undefined) return plainText(takenDownMessage(domain, takenDown), 451, { "Cache-Control": "public, max-age=60" });
  const url = new URL(c.req.url);
  // Each parameter once: a repeated one would be read one way here and another by the signature.
  if (new Set(url.searchParams.keys()).size !== [...url.searchParams.keys()].length)
    return plainText("Invalid query: a parameter is repeated", 400);
  const params = query.safeParse(Object.fromEntries(url.searchParams));
  if (!params.success) return plainText(firstMessage(params.error), 400);
  const { maxWidth, width, format, theme } = params.data;
  const dpr = densityOf(params.data);
  const defer = c.var.ctx.defer;
  const signature = await checkAssetSignature(c.env.SIGNED_URL_SECRET, url);
  if (signature === "expired") return plainText("Signed URL expired", 403);
  if (signature === "invalid") return plainText("Invalid signature", 403);

  // The vector, when one is asked for and there is one: a vector key itself, or a master's vector.
  // A stranger's markup (a discovered SVG icon) is never served, whatever an older write stored.
  const ours = sourceSetOfKey(key) !== DISCOVERED_SOURCE_SET;
  if (isVectorKey(key) && !ours) return notFound();
  const vector = isVectorKey(key) ? key : format === "svg" && ours ? await storedVector(c.env.LOGOS, key) : null;
  if (vector) return serveVector(c.req.raw, c.env.LOGOS, vector);
  const output: OutputFormat = format === "svg" ? "png" : format;
  // Said of this request only: the image is cached under its output format, which a PNG and
  // an SVG asked of a logo without a vector share.
  const fallback: Record<string, string> = format === "svg" ? { "X-Logo-Format": "png" } : {};

  // What was asked, normalised (unsigned widths on the ladder, defaults filled in): the name the
  // answer is cached under, so that neither junk nor spelling makes a new image.
  const exact = signature === "valid";
  const askedWidth = width === undefined ? undefined : exact ? width : ladderUp(width);
  // An unsigned maxWidth is compared with the stored width, density applied, before it is
  // rounded to the ladder: rounded first, 45 shrank a 40-wide logo to 32 (spec 3: a maxWidth
  // larger than the source serves the original). One at or above the stored width asks for
  // the stored image and shares its cache entry. Sizes unknown (0) still round and resize.
  let stored: StoredObject | null | undefined;
  let askedMax = exact ? maxWidth : undefined;
  if (maxWidth !== undefined && !exact) {
    stored = await storedObject(c.env, key, defer);
    if (!stored) return notFound();
    askedMax = stored.width > 0 ? scaleDownTo(stored.width, maxWidth * dpr) : ladderDown(maxWidth);
  }
  // The density makes a different image only where it is still to be applied.
  const densityAsked = askedWidth !== undefined || (askedMax !== undefined && exact) ? dpr : 1;
  const page = output === "jpg" ? (theme ?? "light") : null;
  const cacheId = `${CACHE_ORIGIN}/${encodeAssetKey(key)}/${askedWidth ?? "-"}/${askedMax ?? "-"}/${densityAsked}/${output}${page ? `/${page}` : ""}`;
  const remembered = recent.get(cacheId);
  if (remembered) return finish(c.req.raw, new Response(remembered.body, { status: 200, headers: remembered.headers }), fallback);
  const cacheRequest = new Request(cacheId, { method: "GET" });
  const hit = await cachedResponse(null, cacheRequest);
  if (hit) {
    const body = await hit.arrayBuffer();
    recent.set(cacheId, { body, headers: [...hit.headers] }, body.byteLength);
    return finish(c.req.raw, new Response(body, { status: 200, headers: hit.headers }), fallback);
  }

  stored ??= await storedObject(c.env, key, defer);
  if (!stored) return notFound();
  const { width: sourceWidth, height: sourceHeight } = stored;
  // Objects written before renditions carried their size report 0: resize those whenever asked,
  // the resize itself never enlarging for maxWidth.
  const known = sourceWidth > 0;
  // The density multiplies what was asked, never past the stored width; the ladder still applies.
  const densify = (w: number, round: (w: number) => number) =>
    dpr === 1 || !known ? w : exact ? Math.max(w, Math.min(w * dpr, sourceWidth)) : round(Math.max(w, Math.min(w * dpr, sourceWidth)));
  let target: number | undefined;
  if (askedWidth !== undefined) target = withinHeight(densify(askedWidth, ladderUp), sourceWidth, sourceHeight);
  else if (askedMax !== undefined) {
    // An unsigned maxWidth had the density and the stored width applied above.
    const wanted = withinHeight(exact ? densify(askedMax, ladderDown) : askedMax, sourceWidth, sourceHeight);
    target = !known || wanted < sourceWidth ? wanted : undefined;
  }
  const resized = target !== undefined && target !== sourceWidth;
  const variant = `w${resized ? target : "0"}-${output}${page ? `-${page}` : ""}`;
  const etag = `"${stored.etag}${variant === "w0-png" ? "" : `-${variant}`}"`;
  const headers = new Headers({
    "Content-Type": MIME_TYPES[output],
    "Cache-Control": IMMUTABLE,
    ETag: etag,
    "X-Logo-Source": logoSourceOf(sourceSetOfKey(key)),
  });
  if (known) {
    const served = resized && (width !== undefined || target! < sourceWidth) ? target! : sourceWidth;
    headers.set("X-Image-Width", String(served));
    headers.set("X-Image-Height", String(served === sourceWidth ? sourceHeight : scaledHeight(sourceWidth, sourceHeight, served)));
  }
  if (ifNoneMatch(c.req.header("if-none-match"), etag)) return finish(c.req.raw, new Response(null, { status: 304, headers }), fallback);

  const object = await dependency("object storage", c.env.LOGOS.get(key));
  if (!object) return notFound();
  const { bytes, contentType } = await transformImage(c.env.IMAGES, object.body, {
    resize: resized ? { width: target!, enlarge: width !== undefined } : undefined,
    format: output,
    page: page ?? "light",
  });
  // The type as made: an AVIF Cloudflare could not make comes as WebP or JPEG (transform.ts).
  // Such an answer is not the asset's for good: cached an hour, under no ETag of the AVIF's,
  // and not kept here, so that a later request asks again.
  headers.set("Content-Type", contentType);
  headers.set("Content-Length", String(bytes.byteLength));
  if (contentType !== MIME_TYPES[output]) {
    headers.set("Cache-Control", "public, max-age=3600");
    headers.delete("ETag");
    return finish(c.req.raw, new Response(bytes, { status: 200, headers }), fallback);
  }
  const response = new Response(bytes, { status: 200, headers });
  recent.set(cacheId, { body: bytes, headers: [...headers] }, bytes.byteLength);
  // Tagged for a zone's purge of the domain (src/purge/cdn.ts); the tag is not sent to clients.
  const tagged = response.clone();
  tagged.headers.set("Cache-Tag", domainCacheTag(domain));
  c.var.ctx.defer(storeResponse(null, cacheRequest, tagged));
  return finish(c.req.raw, response, fallback);
});

// Anything else under /assets/ (no key, more segments) is no asset either, not a domain lookup.
assets.on(["GET", "HEAD"], "/*", () => notFound());
assets.on(["GET", "HEAD"], "/", () => notFound());

/** What the route needs of a stored object: its ETag and size (0 for objects that never recorded it). */
interface StoredObject {
  etag: string;
  width: number;
  height: number;
}

// Keys are content-addressed, so what is learnt of one never changes: remembered in the
// isolate, and in the Cache API for every isolate of the location, a cached answer that
// depends on the stored width (an unsigned maxWidth) costs no storage call, as before it did.
const storedObjects = isolateCache<string, StoredObject>({
  name: "assets.storedObjects",
  holds: "a stored object's key and what the route needs of it (ETag, width, height)",
  capacity: 4096,
  entryBytes: asciiBytes(340) + objectBytes(3) + asciiBytes(40) + MAP_ENTRY_BYTES,
  ofDomain: (key, _stored, domain) => domainOfAsset(key) === domain,
});

async function storedObject(
  env: Pick<Env, "LOGOS" | "DB">,
  key: string,
  defer: (work: Promise<unknown>) => void,
): Promise<StoredObject | null> {
  const bucket = env.LOGOS;
  const remembered = storedObjects.get(key);
  if (remembered) return remembered;
  const sizeRequest = `${CACHE_ORIGIN}/stored/${encodeAssetKey(key)}`;
  const cached = await cachedResponse(null, sizeRequest);
  if (cached) {
    const stored = (await cached.json()) as StoredObject;
    storedObjects.set(key, stored);
    return stored;
  }
  // A greyscale rendition not asked for before is made now (src/images/greyOnDemand.ts).
  const head =
    (await dependency("object storage", bucket.head(key))) ??
    (await makeGrey(bucket, key, (grey) => namesGrey(createDb(env.DB), grey)))?.object;
  if (!head) return null;
  const stored = { etag: head.etag, width: Number(head.customMetadata?.width ?? 0), height: Number(head.customMetadata?.height ?? 0) };
  storedObjects.set(key, stored);
  defer(storeResponse(null, sizeRequest, Response.json(stored, { headers: { "Cache-Control": IMMUTABLE } })));
  return stored;
}

/** The sanitised vector of a master, when the logo has one. */
async function storedVector(bucket: R2Bucket, key: string): Promise<string | null> {
  if (!/\.[0-9a-f]{16}\.png$/.test(key)) return null;
  const candidate = vectorKey(key);
  return (await dependency("object storage", bucket.head(candidate))) ? candidate : null;
}

/** Sanitised SVG (src/images/svg.ts), with a policy that forbids scripts should anything have slipped through. */
async function serveVector(request: Request, bucket: R2Bucket, key: string): Promise<Response> {
  const object = await dependency("object storage", bucket.get(key));
  if (!object) return notFound();
  const headers = new Headers({
    "Content-Type": MIME_TYPES.svg,
    "Cache-Control": IMMUTABLE,
    ETag: `"${object.etag}"`,
    ...SVG_HEADERS,
    "X-Logo-Source": logoSourceOf(sourceSetOfKey(key)),
  });
  return finish(request, new Response(await object.arrayBuffer(), { status: 200, headers }), {});
}

function ifNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header === "*" || header.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag);
}

/** Conditional and HEAD handling for a full 200 response, cached or fresh. */
function finish(request: Request, response: Response, fallback: Record<string, string>): Response {
  // An image cached by an earlier release may carry the header of the request that cached it.
  response.headers.delete("X-Logo-Format");
  for (const [name, value] of Object.entries(fallback)) response.headers.set(name, value);
  const etag = response.headers.get("ETag") ?? "";
  if (ifNoneMatch(request.headers.get("if-none-match") ?? undefined, etag)) {
    return new Response(null, { status: 304, headers: response.headers });
  }
  if (request.method === "HEAD") return new Response(null, { status: 200, headers: response.headers });
  return response;
}
