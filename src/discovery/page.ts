import { z } from "zod";

/**
 * What a site's home page and web app manifest say about its icons and its name, read with
 * the runtime's streaming HTMLRewriter (the page has already been cut off at its byte limit).
 */
export type IconRel = "icon" | "apple-touch-icon" | "mask-icon";

export interface DeclaredIcon {
  href: string;
  rel: IconRel | "manifest";
  /** Largest declared edge in pixels; "any" (a vector) is Infinity; null when not declared. */
  size: number | null;
  type: string | null;
}

export interface PageFacts {
  baseHref: string | null;
  icons: DeclaredIcon[];
  manifestHref: string | null;
  themeColor: string | null;
  siteName: string | null;
  applicationName: string | null;
  title: string | null;
}

const MAX_ICONS = 64;
const MAX_TEXT = 200;

/** `sizes="16x16 32x32"`, `"any"` → the largest edge; null when absent or unreadable. */
export function declaredSize(sizes: string | null | undefined): number | null {
  if (!sizes) return null;
  let largest: number | null = null;
  for (const token of sizes.toLowerCase().split(/\s+/)) {
    if (token === "any") return Infinity;
    const match = /^(\d{1,5})x(\d{1,5})$/.exec(token);
    if (match) largest = Math.max(largest ?? 0, Math.min(Number(match[1]), Number(match[2])));
  }
  return largest;
}

function iconRel(rel: string): IconRel | "manifest" | null {
  const tokens = new Set(rel.toLowerCase().split(/\s+/).filter(Boolean));
  if (tokens.has("manifest")) return "manifest";
  if (tokens.has("mask-icon")) return "mask-icon";
  if (tokens.has("apple-touch-icon") || tokens.has("apple-touch-icon-precomposed")) return "apple-touch-icon";
  // "icon" and "shortcut icon" alike.
  if (tokens.has("icon")) return "icon";
  return null;
}

/**
 * A name as the catalogue and headers take it: whitespace collapsed, well-formed, at most
 * MAX_TEXT code points. Cut by code point, not by UTF-16 unit: a cut through a surrogate pair
 * would leave half an emoji, and a lone surrogate is no Unicode text (encodeURIComponent throws
 * on it, D1 stores it as three replacement characters).
 */
const clean = (text: string | null | undefined) => {
  const whole = (text ?? "").replace(/\s+/g, " ").trim();
  // MAX_TEXT code points fit in twice as many units; a pair cut there lies past MAX_TEXT.
  const value = Array.from(whole.slice(0, MAX_TEXT * 2).toWellFormed()).slice(0, MAX_TEXT).join("").trim();
  return value === "" ? null : value;
};

export async function readPage(html: Uint8Array): Promise<PageFacts> {
  const facts: PageFacts = { baseHref: null, icons: [], manifestHref: null, themeColor: null, siteName: null, applicationName: null, title: null };
  let title = "";
  let inTitle = false;
  const rewriter = new HTMLRewriter()
    .on("base[href]", {
      element(element) {
        facts.baseHref ??= element.getAttribute("href");
      },
    })
    .on("link[rel][href]", {
      element(element) {
        const rel = iconRel(element.getAttribute("rel") ?? "");
        const href = element.getAttribute("href")?.trim();
        if (!rel || !href) return;
        if (rel === "manifest") facts.manifestHref ??= href;
        else if (facts.icons.length < MAX_ICONS) {
          facts.icons.push({ href, rel, size: declaredSize(element.getAttribute("sizes")), type: element.getAttribute("type")?.toLowerCase() ?? null });
        }
      },
    })
    .on("meta[content]", {
      element(element) {
        const key = (element.getAttribute("name") ?? element.getAttribute("property") ?? "").toLowerCase();
        const content = element.getAttribute("content");
        if (key === "theme-color") facts.themeColor ??= content;
        else if (key === "og:site_name") facts.siteName ??= clean(content);
        else if (key === "application-name") facts.applicationName ??= clean(content);
      },
    })
    .on("title", {
      element(element) {
        if (title !== "") return;
        inTitle = true;
        element.onEndTag(() => {
          inTitle = false;
        });
      },
      text(chunk) {
        if (inTitle && title.length < MAX_TEXT * 2) title += chunk.text;
      },
    });
  // The transformed output is not needed: it is drained so the handlers run over the whole page.
  await rewriter.transform(new Response(html, { headers: { "Content-Type": "text/html" } })).arrayBuffer();
  facts.title = clean(decodeEntities(title));
  return facts;
}

/**
 * Titles arrive as raw text; the handful of entities that turn up in names. A numeric reference
 * to nothing a string may hold (NUL, a surrogate, past U+10FFFF) is U+FFFD, as browsers read it
 * (HTML § 13.2.5.80, numeric character reference end state).
 */
function decodeEntities(text: string): string {
  const named: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, entity: string) => {
    if (entity[0] === "#") {
      const code = entity[1]?.toLowerCase() === "x" ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10);
      return code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff) ? "\ufffd" : String.fromCodePoint(code);
    }
    return named[entity.toLowerCase()] ?? whole;
  });
}

/** The parts of a web app manifest (W3C Web Application Manifest) that name icons and the app. */
const manifestSchema = z
  .object({
    name: z.string().optional().catch(undefined),
    short_name: z.string().optional().catch(undefined),
    theme_color: z.string().optional().catch(undefined),
    icons: z
      .array(
        z
          .object({
            src: z.string(),
            sizes: z.string().optional().catch(undefined),
            type: z.string().optional().catch(undefined),
            purpose: z.string().optional().catch(undefined),
          })
          .nullable()
          .catch(null),
      )
      .optional()
      .catch(undefined),
  })
  .catch({});

export interface ManifestFacts {
  name: string | null;
  themeColor: string | null;
  icons: DeclaredIcon[];
}

export function readManifest(bytes: Uint8Array): ManifestFacts | null {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
  const manifest = manifestSchema.parse(json);
  const icons = (manifest.icons ?? [])
    .flatMap((icon) => (icon && icon.src.trim() !== "" ? [icon] : []))
    // "monochrome" icons are masks without colour; a maskable icon is still the full mark.
    .filter((icon) => {
      const purposes = (icon.purpose ?? "").toLowerCase().split(/\s+/).filter(Boolean);
      return purposes.length === 0 || purposes.some((purpose) => purpose !== "monochrome");
    })
    .slice(0, MAX_ICONS)
    .map((icon): DeclaredIcon => ({ href: icon.src.trim(), rel: "manifest", size: declaredSize(icon.sizes), type: icon.type?.toLowerCase() ?? null }));
  return { name: clean(manifest.name) ?? clean(manifest.short_name), themeColor: manifest.theme_color ?? null, icons };
}

/** `#abc`, `#aabbcc` (any case) → `#aabbcc`; anything else (named colours, rgb()) → null. */
export function brandColour(value: string | null | undefined): string | null {
  const match = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec((value ?? "").trim());
  if (!match) return null;
  const hex = match[1]!.toLowerCase();
  return `#${hex.length === 3 ? [...hex].map((c) => c + c).join("") : hex}`;
}
