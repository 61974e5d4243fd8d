import { Hono } from "hono";
import { z } from "zod";
import { logoSourceOf } from "../catalogue/provenance";
import type { AppEnv } from "../env";
import { sourceSetOfKey } from "../images/keys";
import { resizePng, scaledHeight } from "../images/transform";
import { firstMessage, integerParam } from "../lib/params";
import { cachedResponse, dependency, storeResponse } from "../lib/dependencies";
import { RecentBytes } from "../lib/recent";
import { plainText } from "../lib/responses";
import { decodeAssetKey } from "./codec";
import { checkAssetSignature, unsignedUrl } from "./signedUrls";

/**
 * GET /assets/{base64urlKey}?maxWidth=N (spec section 3): public PNG bytes of a logo object,
 * immutable under their URL (keys are content-addressed).
 *
 *   maxWidth  1-3200, scale down only: a larger value, or none, serves the stored size
 *   width     1-3200, exactly this width (may enlarge): what lookups redirect to
 *   expires, signature
 *             a signed, time-limited URL (three-tool get_logo): 403 once expired or when
 *             any part of it was changed; the asset itself stays public without them
 */
const IMMUTABLE = "public, max-age=31536000, immutable";
const recent = new RecentBytes<{ body: ArrayBuffer; headers: [string, string][] }>(16 * 1024 * 1024);
const MAX_WIDTH = 3200;

const query = z.object({
  maxWidth: integerParam("maxWidth", 1, MAX_WIDTH).optional(),
  width: integerParam("width", 1, MAX_WIDTH).optional(),
});

const notFound = () => plainText("Not found", 404);

export const assets = new Hono<AppEnv>().on(["GET", "HEAD"], "/assets/:key", async (c) => {
  const key = decodeAssetKey(c.req.param("key"));
  if (key === null) return notFound();
  const params = query.safeParse(c.req.query());
  if (!params.success) return plainText(firstMessage(params.error), 400);
  const { maxWidth, width } = params.data;
  if (maxWidth !== undefined && width !== undefined) return plainText("Invalid maxWidth: give maxWidth or width, not both", 400);
  const url = new URL(c.req.url);
  const signature = await checkAssetSignature(c.env.SIGNED_URL_SECRET, url);
  if (signature === "expired") return plainText("Signed URL expired", 403);
  if (signature === "invalid") return plainText("Invalid signature", 403);

  // Answers are cached by URL (a signed one without its signature) in the isolate and in this
  // data centre; a HEAD shares the GET's.
  const cacheUrl = signature === "valid" ? unsignedUrl(url) : c.req.url;
  const remembered = recent.get(cacheUrl);
  if (remembered) return finish(c.req.raw, new Response(remembered.body, { status: 200, headers: remembered.headers }));
  const cacheRequest = new Request(cacheUrl, { method: "GET" });
  const hit = await cachedResponse(null, cacheRequest);
  if (hit) {
    const body = await hit.arrayBuffer();
    recent.set(cacheUrl, { body, headers: [...hit.headers] }, body.byteLength);
    return finish(c.req.raw, new Response(body, { status: 200, headers: hit.headers }));
  }

  const head = await dependency("object storage", c.env.LOGOS.head(key));
  if (!head) return notFound();
  const sourceWidth = Number(head.customMetadata?.width ?? 0);
  const sourceHeight = Number(head.customMetadata?.height ?? 0);
  // Objects written before renditions carried their size report 0: resize those whenever asked,
  // the resize itself never enlarging for maxWidth.
  const known = sourceWidth > 0;
  const target = width ?? (maxWidth !== undefined && (!known || maxWidth < sourceWidth) ? maxWidth : undefined);
  const transformed = target !== undefined && target !== sourceWidth;
  const etag = `"${head.etag}${transformed ? `-w${target}` : ""}"`;
  const headers = new Headers({ "Content-Type": "image/png", "Cache-Control": IMMUTABLE, ETag: etag, "X-Logo-Source": logoSourceOf(sourceSetOfKey(key)) });
  if (transformed && known && (width !== undefined || target < sourceWidth)) {
    headers.set("X-Image-Width", String(target));
    headers.set("X-Image-Height", String(scaledHeight(sourceWidth, sourceHeight, target)));
  } else if (known) {
    headers.set("X-Image-Width", String(sourceWidth));
    headers.set("X-Image-Height", String(sourceHeight));
  }

  if (ifNoneMatch(c.req.header("if-none-match"), etag)) return new Response(null, { status: 304, headers });

  const object = await dependency("object storage", c.env.LOGOS.get(key));
  if (!object) return notFound();
  // Buffered: logos are small, and the cache wants a length.
  const bytes = await dependency("object storage", async () =>
    new Response(transformed ? await resizePng(c.env.IMAGES, object.body, { width: target, enlarge: width !== undefined }) : object.body).arrayBuffer(),
  );
  headers.set("Content-Length", String(bytes.byteLength));
  const response = new Response(bytes, { status: 200, headers });
  recent.set(cacheUrl, { body: bytes, headers: [...headers] }, bytes.byteLength);
  c.executionCtx.waitUntil(storeResponse(null, cacheRequest, response.clone()));
  return finish(c.req.raw, response);
});

// Anything else under /assets/ (no key, more segments) is no asset either, not a domain lookup.
assets.on(["GET", "HEAD"], "/assets/*", () => notFound());
assets.on(["GET", "HEAD"], "/assets", () => notFound());

function ifNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header === "*" || header.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag);
}

/** Conditional and HEAD handling for a full 200 response, cached or fresh. */
function finish(request: Request, response: Response): Response {
  const etag = response.headers.get("ETag") ?? "";
  if (ifNoneMatch(request.headers.get("if-none-match") ?? undefined, etag)) {
    return new Response(null, { status: 304, headers: response.headers });
  }
  if (request.method === "HEAD") return new Response(null, { status: 200, headers: response.headers });
  return response;
}
