import { z } from "zod";
import { decodeCharacterReferences } from "./entities";

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
  /** The name a JSON-LD `Organization` (or a kind of one) or `WebSite` gives. */
  structuredName: string | null;
  title: string | null;
}

const MAX_ICONS = 64;
const MAX_TEXT = 200;
/** JSON-LD read at most, all blocks together: names sit near the top of a page. */
const MAX_STRUCTURED = 64 * 1024;
/** Schema.org types whose `name` is the site's or the company's own. */
const NAMED_TYPES = new Set(["Organization", "Corporation", "OnlineStore", "LocalBusiness", "Brand", "WebSite", "NewsMediaOrganization"]);

/**
 * The first name an Organization (or a kind of one) or a WebSite gives in JSON-LD blocks
 * (`@graph` lists read too); null when none does or the blocks do not parse.
 */
export function structuredName(blocks: string[]): string | null {
  const visit = (node: unknown, depth: number): string | null => {
    if (depth > 4 || node === null || typeof node !== "object") return null;
    if (Array.isArray(node)) {
      for (const item of node.slice(0, 32)) {
        const found = visit(item, depth + 1);
        if (found) return found;
      }
      return null;
    }
    const record = node as Record<string, unknown>;
    const types = ([] as unknown[]).concat(record["@type"] ?? []);
    if (types.some((type) => typeof type === "string" && NAMED_TYPES.has(type)) && typeof record.name === "string") return record.name;
    return visit(record["@graph"], depth + 1);
  };
  for (const block of blocks) {
    try {
      const found = visit(JSON.parse(block), 0);
      if (found) return clean(found);
    } catch {
      // A block that is no JSON names nothing.
    }
  }
  return null;
}

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
 * on it, D1 stores it as three replacement characters). Control characters (NUL, ESC and its
 * terminal sequences' start) and the invisible marks that reorder or hide text (bidi marks,
 * overrides and isolates, zero-width space, word joiner, invisible operators, soft hyphen,
 * BOM, interlinear annotation) are dropped: a site must not make its name display as
 * another. Format characters that are text stay: the joiners (emoji, Indic and Arabic
 * scripts), tags (the flags of England, Scotland, Wales), Arabic and Syriac number signs.
 */
const INVISIBLE = /[\p{Cc}\u00AD\u061C\u200B\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\uFFF9-\uFFFB]/gu;
const clean = (text: string | null | undefined) => {
  // Whitespace is control characters too: made spaces first, and collapsed last.
  const whole = (text ?? "").replace(/\s/g, " ").replace(INVISIBLE, "").replace(/ +/g, " ").trim();
  // MAX_TEXT code points fit in twice as many units; a pair cut there lies past MAX_TEXT.
  const value = Array.from(whole.slice(0, MAX_TEXT * 2).toWellFormed())
    .slice(0, MAX_TEXT)
    .join("")
    .trim();
  return value === "" ? null : value;
};

/** An attribute's value with its character references decoded (the rewriter gives it as written). */
const attribute = (element: Element, name: string) => {
  const value = element.getAttribute(name);
  return value === null ? null : decodeCharacterReferences(value);
};

export async function readPage(html: Uint8Array, contentType: string | null = null): Promise<PageFacts> {
  const facts: PageFacts = {
    baseHref: null,
    icons: [],
    manifestHref: null,
    themeColor: null,
    siteName: null,
    applicationName: null,
    structuredName: null,
    title: null,
  };
  let title = "";
  let inTitle = false;
  const blocks: string[] = [];
  let structured = 0;
  const rewriter = new HTMLRewriter()
    .on("base[href]", {
      element(element) {
        facts.baseHref ??= attribute(element, "href");
      },
    })
    .on("link[rel][href]", {
      element(element) {
        const rel = iconRel(attribute(element, "rel") ?? "");
        const href = attribute(element, "href")?.trim();
        if (!rel || !href) return;
        if (rel === "manifest") facts.manifestHref ??= href;
        else if (facts.icons.length < MAX_ICONS) {
          facts.icons.push({
            href,
            rel,
            size: declaredSize(attribute(element, "sizes")),
            type: attribute(element, "type")?.toLowerCase() ?? null,
          });
        }
      },
    })
    .on("meta[content]", {
      element(element) {
        const key = (attribute(element, "name") ?? attribute(element, "property") ?? "").toLowerCase();
        const content = attribute(element, "content");
        if (key === "theme-color") facts.themeColor ??= content;
        else if (key === "og:site_name") facts.siteName ??= clean(content);
        else if (key === "application-name") facts.applicationName ??= clean(content);
      },
    })
    .on('script[type="application/ld+json"]', {
      element() {
        blocks.push("");
      },
      text(chunk) {
        if (structured >= MAX_STRUCTURED || blocks.length === 0) return;
        structured += chunk.text.length;
        blocks[blocks.length - 1] += chunk.text;
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
  // The page is handed over as text already decoded, so its own encoding is not lost on the way.
  await rewriter
    .transform(new Response(pageText(html, contentType), { headers: { "Content-Type": "text/html; charset=utf-8" } }))
    .arrayBuffer();
  facts.title = clean(decodeCharacterReferences(title));
  facts.structuredName = structuredName(blocks);
  return facts;
}

/**
 * The page as text, in the encoding it is written in, chosen as browsers choose it (HTML
 * § 13.2.3, simplified): a byte order mark; else the charset the response's Content-Type names;
 * else one a `<meta charset>` or `<meta http-equiv="Content-Type" content="…; charset=…">` in
 * the first 1024 bytes names; else UTF-8. A label TextDecoder does not know (it knows the
 * Encoding Standard's: windows-1252, shift_jis, gbk, …) is passed over. Read as UTF-8 whatever
 * it is, a windows-1252 page's "Café" would be stored as "Caf\ufffd".
 */
function pageText(html: Uint8Array, contentType: string | null): string {
  const bom =
    html[0] === 0xef && html[1] === 0xbb && html[2] === 0xbf
      ? "utf-8"
      : html[0] === 0xfe && html[1] === 0xff
        ? "utf-16be"
        : html[0] === 0xff && html[1] === 0xfe
          ? "utf-16le"
          : null;
  // The prescan reads bytes as ASCII, and single-byte windows-1252 keeps every byte one character.
  const start = new TextDecoder("windows-1252").decode(html.subarray(0, 1024));
  const meta = /<meta\s[^>]*?charset\s*=\s*["']?\s*([^\s"';>]+)/i.exec(start)?.[1] ?? null;
  // A page whose meta tag could be read as ASCII is no UTF-16 page, whatever the tag says.
  const fromMeta = meta && /^utf-?16/i.test(meta) ? "utf-8" : meta;
  const header = /;\s*charset\s*=\s*["']?([^\s"';]+)/i.exec(contentType ?? "")?.[1] ?? null;
  for (const label of [bom, header, fromMeta]) {
    if (!label) continue;
    try {
      return new TextDecoder(label).decode(html);
    } catch {
      // An encoding TextDecoder does not know: the next source names another, or UTF-8 remains.
    }
  }
  return new TextDecoder().decode(html);
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
  shortName: string | null;
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
    .map(
      (icon): DeclaredIcon => ({
        href: icon.src.trim(),
        rel: "manifest",
        size: declaredSize(icon.sizes),
        type: icon.type?.toLowerCase() ?? null,
      }),
    );
  return { name: clean(manifest.name), shortName: clean(manifest.short_name), themeColor: manifest.theme_color ?? null, icons };
}

/** `#abc`, `#aabbcc` (any case) → `#aabbcc`; anything else (named colours, rgb()) → null. */
export function brandColour(value: string | null | undefined): string | null {
  const match = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec((value ?? "").trim());
  if (!match) return null;
  const hex = match[1]!.toLowerCase();
  return `#${hex.length === 3 ? [...hex].map((c) => c + c).join("") : hex}`;
}
