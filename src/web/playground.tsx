import { type Context, Hono } from "hono";
import { z } from "zod";
import { readVars } from "../env";
import { type ResolvedLogo, resolveLogo, withThemes } from "../catalogue/resolveLogo";
import { takedownOf, takenDownMessage } from "../catalogue/takedowns";
import { overrideFor } from "../corrections/overrides";
import { scaledHeight } from "../images/transform";
import type { ListedKey } from "../keys/apiKeys";
import { noteKeyUse } from "../keys/lastUsed";
import { accountKey } from "../keys/verify";
import { createDb, type Db } from "../lib/db";
import { escapeMarkup } from "../lib/markup";
import { normaliseDomain } from "../lib/domain";
import { plainText, rateLimitHeaders, retryAfter } from "../lib/responses";
import { consumeLookup } from "../limits/lookupLimits";
import { askLimiter, limiterNames } from "../limits/rateLimiterClient";
import { lookKey, vectorKey } from "../images/objectKeys";
import { redirectTarget } from "../images/assetUrls";
import { keyLabel } from "./format";
import { signedIn, type WebEnv } from "./session";

/**
 * The playground: a domain's logo at a few sizes on light and dark, and the `<img>` that
 * embeds it. Signed in, every image is a lookup with one of the account's publishable keys,
 * counted against its limits like a lookup from the account's own site (the page knows keys
 * only by id, so the images go through /portal/playground/logo). A visitor without an
 * account sees the public asset URLs instead, a few domains a minute per address; an account
 * may type a few more a minute.
 */
export const PLAYGROUND_SIZES = [32, 64, 128] as const;
export const PLAYGROUND_THEMES = ["light", "dark"] as const;
/** The formats shown side by side, at 128 px on a light page (SVG too where the logo has a vector). */
export const PLAYGROUND_FORMATS = ["png", "webp", "avif", "jpg"] as const;
const FORMAT_SIZE = 128;
type Theme = (typeof PLAYGROUND_THEMES)[number];
type Format = (typeof PLAYGROUND_FORMATS)[number] | "svg";
/** Domains a minute a visitor without an account may try on the landing page. */
export const GUEST_TRIES_PER_MINUTE = 30;
/** Domains a minute a signed-in account may try on its dashboard. */
export const ACCOUNT_TRIES_PER_MINUTE = 60;

export interface PlaygroundImage {
  size: number;
  theme: Theme;
  format: Format;
  src: string;
  width: number;
  height: number;
}

export type PlaygroundResult = { domain: string; logo: ResolvedLogo; images: PlaygroundImage[] } | { domain: string; error: string };

/** The logo a typed domain names, or what to say instead. */
async function resolveTyped(
  bucket: R2Bucket,
  db: Db,
  typed: string,
): Promise<{ domain: string; logo: ResolvedLogo } | { domain: string; error: string }> {
  const normalised = normaliseDomain(hostOf(typed));
  if (!normalised.ok) return { domain: typed, error: `“${typed}” is not a domain name. Try one like github.com.` };
  const subject = { kind: "domain", value: normalised.domain } as const;
  const logo = await resolveLogo(db, subject);
  const takenDown = await takedownOf(db, normalised.domain, logo?.domain);
  if (takenDown !== undefined) return { domain: normalised.domain, error: `${takenDownMessage(normalised.domain, takenDown)}.` };
  if (!logo) return { domain: normalised.domain, error: `No logo for ${normalised.domain} yet.` };
  return { domain: normalised.domain, logo: await withThemes(bucket, db, subject, logo) };
}

/** People paste addresses: a URL (or a host with a path) counts by its host. */
function hostOf(typed: string): string {
  if (!/[/:]/.test(typed)) return typed;
  try {
    return new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(typed) ? typed : `http://${typed}`).hostname;
  } catch {
    return typed;
  }
}

function images(logo: ResolvedLogo, src: (size: number, theme: Theme, format: Format) => string): PlaygroundImage[] {
  const height = (size: number) => scaledHeight(logo.width, logo.height, size);
  const sized = PLAYGROUND_THEMES.flatMap((theme) =>
    PLAYGROUND_SIZES.map((size) => ({
      size,
      theme,
      format: "png" as const,
      src: src(size, theme, "png"),
      width: size,
      height: height(size),
    })),
  );
  // A vector is served as it is only where the catalogue holds one of its own (never a site's markup).
  const formats: Format[] = [...PLAYGROUND_FORMATS, ...(logo.renditions.vector && logo.source === "catalogue" ? ["svg" as const] : [])];
  const formatted = formats
    .filter((format) => format !== "png")
    .map((format) => ({
      size: FORMAT_SIZE,
      theme: "light" as const,
      format,
      src: src(FORMAT_SIZE, "light", format),
      width: FORMAT_SIZE,
      height: height(FORMAT_SIZE),
    }));
  return [...sized, ...formatted];
}

/** Images for a signed-in account: lookups with its key `keyId`. */
export function keyImages(logo: ResolvedLogo, domain: string, keyId: string): PlaygroundImage[] {
  return images(
    logo,
    (size, theme, format) => `/portal/playground/logo?${new URLSearchParams({ key: keyId, domain, size: String(size), theme, format })}`,
  );
}

/** Where a lookup of `logo` at `size` on a `theme` page, in `format`, redirects to, as the lookup route builds it. */
function lookupTarget(env: Env, base: string, logo: ResolvedLogo, size: number, theme: Theme, format: Format = "png"): string {
  const key = format === "svg" ? vectorKey(logo.masterKey, logo.renditions.version) : lookKey(logo, { theme, greyscale: false });
  return redirectTarget({ cdn: readVars(env).CDN_URL, base, secret: env.SIGNED_URL_SECRET }, { key, format, width: size, page: theme });
}

/** Images for a visitor: the public, permanent asset URLs a lookup would redirect to. */
export function assetImages(env: Env, base: string, logo: ResolvedLogo): PlaygroundImage[] {
  return images(logo, (size, theme, format) => lookupTarget(env, base, logo, size, theme, format));
}

/**
 * The playground's answer to a typed domain, counted first: a visitor's by address and an
 * account's by account, since a typed domain is resolved whether or not its images then count
 * as lookups (an account without a publishable key is shown the public asset URLs, as a visitor
 * is). A refusal is a 429 with Retry-After, the page saying why.
 */
export async function typedResult(
  c: Context,
  visitor: { address: string } | { accountId: string },
  typed: string,
  imagesOf: (logo: ResolvedLogo, domain: string) => PlaygroundImage[],
): Promise<{ result: PlaygroundResult; status: 200 | 429 }> {
  const env = c.env as Env;
  const [name, limit] =
    "address" in visitor
      ? [limiterNames.playgroundAddress(visitor.address), GUEST_TRIES_PER_MINUTE]
      : [limiterNames.playgroundAccount(visitor.accountId), ACCOUNT_TRIES_PER_MINUTE];
  const now = Date.now();
  const decision = await askLimiter(env, name, (limiter) => limiter.consume([{ name: "playground", period: "minute", limit }], 1, now));
  if (!decision.allowed) {
    c.header("Retry-After", retryAfter(decision.resetAt, now));
    const more = "address" in visitor ? ", or sign in to try more" : "";
    return { result: { domain: typed, error: `That is ${limit} domains this minute. Wait a minute${more}.` }, status: 429 };
  }
  const found = await resolveTyped(env.LOGOS, createDb(env.DB), typed);
  return { result: "logo" in found ? { ...found, images: imagesOf(found.logo, found.domain) } : found, status: 200 };
}

export function Playground(props: {
  action: string;
  base: string;
  typed?: string | undefined;
  result?: PlaygroundResult | null | undefined;
  /** The account's live publishable keys, and the one the images use. */
  keys?: ListedKey[];
  selectedKey?: ListedKey | undefined;
  headingLevel?: 2 | 3;
  /** A signed-in account may report the logo shown (docs/corrections.md). */
  reportable?: boolean;
}) {
  const Heading = props.headingLevel === 3 ? "h3" : "h2";
  const result = props.result;
  const token = props.selectedKey ? keyLabel(props.selectedKey) : "YOUR_PUBLISHABLE_KEY";
  const snippetImage = result && "logo" in result ? result.images.find((i) => i.theme === "light" && i.size === 128) : undefined;
  return (
    <section class="card playground" aria-labelledby="playground-heading">
      <Heading id="playground-heading">Try a domain</Heading>
      <form method="get" action={props.action}>
        <div>
          <label for="domain">Domain</label>
          <input
            id="domain"
            name="domain"
            type="text"
            inputmode="url"
            autocomplete="off"
            spellcheck={false}
            placeholder="github.com"
            required
            value={props.typed ?? ""}
          />
        </div>
        {props.keys && props.keys.length > 0 && (
          <div>
            <label for="key">Publishable key</label>
            <select id="key" name="key">
              {props.keys.map((key) => (
                <option value={key.id} selected={key.id === props.selectedKey?.id}>
                  {keyLabel(key)}
                </option>
              ))}
            </select>
          </div>
        )}
        <button class="primary" type="submit">
          Show logo
        </button>
      </form>
      {props.keys && props.keys.length === 0 && (
        <p class="hint">
          Logos here come from the public asset URLs. <a href="/portal/keys">Create a publishable key</a> to try real lookups, counted on
          your usage.
        </p>
      )}
      <div class="result" aria-live="polite">
        {result && "error" in result && <p class="warning">{result.error}</p>}
        {result && "logo" in result && (
          <>
            <p>
              <strong>{result.logo.companyName}</strong> <span class="muted">({result.domain})</span>
              {props.reportable && (
                <>
                  {" "}
                  <a
                    class="report-link"
                    href={`/portal/corrections/report?${new URLSearchParams({ domain: result.domain, logoId: String(result.logo.logoId) })}`}
                  >
                    Report this logo
                  </a>
                </>
              )}
            </p>
            <div class="swatches">
              {PLAYGROUND_THEMES.map((theme) => (
                <div class={`swatch ${theme}`}>
                  {result.images
                    .filter((image) => image.theme === theme && image.format === "png")
                    .map((image) => (
                      <figure>
                        <img
                          src={image.src}
                          alt={`${result.logo.companyName} logo, ${image.size} pixels wide, on ${theme}`}
                          width={image.width}
                          height={image.height}
                        />
                        <figcaption>
                          {image.size} px, {theme}
                        </figcaption>
                      </figure>
                    ))}
                </div>
              ))}
            </div>
            <h3>In every format</h3>
            <div class="formats">
              {result.images
                .filter((image) => image.format !== "png")
                .map((image) => (
                  <figure>
                    <img
                      src={image.src}
                      alt={`${result.logo.companyName} logo as ${image.format.toUpperCase()}, ${image.size} pixels wide`}
                      width={image.width}
                      height={image.height}
                    />
                    <figcaption>{image.format.toUpperCase()}</figcaption>
                  </figure>
                ))}
            </div>
            <h3>Embed it</h3>
            <pre id="snippet">
              <code>{`<img src="${props.base}/${result.domain}?token=${token}&size=128" alt="${escapeMarkup(result.logo.companyName)} logo" width="128" height="${snippetImage?.height ?? 128}">`}</code>
            </pre>
            <p class="hint">
              {props.selectedKey
                ? `Uses your key ${token}: put the whole key in its place (it was shown once, when you created it).`
                : "Put one of your publishable keys in place of YOUR_PUBLISHABLE_KEY."}
            </p>
          </>
        )}
      </div>
    </section>
  );
}

const imageQuery = z.object({
  key: z.string().min(1).max(64),
  domain: z.string().min(1).max(253),
  size: z.coerce.number().int().min(1).max(800),
  theme: z.enum(PLAYGROUND_THEMES),
  format: z.enum([...PLAYGROUND_FORMATS, "svg"]).default("png"),
});

/**
 * One playground image: a lookup with the account's key `key`, counted one request at a time
 * (no lease: the count the usage page shows is then exact), answered like a lookup: a redirect
 * to the rendition. Never cached, so each image shown is one lookup counted.
 */
export const playgroundImages = new Hono<WebEnv>();

playgroundImages.get("/playground/logo", signedIn, async (c) => {
  const query = imageQuery.safeParse(c.req.query());
  if (!query.success) return plainText("Invalid playground request", 400);
  const db = c.var.ctx.db;
  const key = await accountKey(db, c.get("account").id, query.data.key);
  if (key?.type !== "publishable") return plainText("No such publishable key", 404);
  const domain = normaliseDomain(query.data.domain);
  if (!domain.ok) return plainText("Invalid domain format", 400);

  const now = Date.now();
  const defer = c.var.ctx.defer;
  const decision = await consumeLookup(c.env, key, { now, defer, leaseSize: 1 });
  const headers = { "Cache-Control": "no-store", ...rateLimitHeaders(decision) };
  if (!decision.allowed) return plainText("Rate limit exceeded", 429, { ...headers, "Retry-After": retryAfter(decision.resetAt, now) });
  noteKeyUse(db, key.id, defer, now);
  const subject = { kind: "domain", value: domain.domain } as const;
  let logo = await resolveLogo(db, subject);
  const takenDown = await takedownOf(db, domain.domain, logo?.domain);
  if (takenDown !== undefined) return plainText(takenDownMessage(domain.domain, takenDown), 451, headers);
  // As a lookup with the key would: the account's own logo where it pinned one.
  if (key.overrides) logo = (await overrideFor(db, key.accountId, subject, logo, now)) ?? logo;
  if (!logo) return plainText("Logo not found", 404, headers);
  logo = await withThemes(c.env.LOGOS, db, subject, logo);
  const format = query.data.format === "svg" && !(logo.renditions.vector && logo.source === "catalogue") ? "png" : query.data.format;
  const location = lookupTarget(c.env, readVars(c.env).PUBLIC_BASE_URL, logo, query.data.size, query.data.theme, format);
  return new Response(null, { status: 302, headers: { ...headers, Location: location } });
});
