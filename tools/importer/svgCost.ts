import { type SaxesAttributeNS, SaxesParser } from "saxes";
import sharp from "sharp";

/**
 * What drawing an SVG would cost, counted before librsvg draws it: librsvg renders a file in
 * one call that nothing interrupts (sharp's timeout of 3 s did not stop a 100 s render), so a
 * file that multiplies its drawing through `<use>` (each reference draws its target again,
 * references of references multiply) or markers (each draws its content again at every vertex
 * it marks) would hold a conversion thread for minutes.
 * Ten thousand blurred circles made of four levels of ten references each took longer than
 * 100 s at the master's size. librsvg's own bound is 500,000 referenced elements; a logo
 * draws a few thousand at most, and blurs or shadows a handful.
 */
export const MAX_DRAWN_ELEMENTS = 50_000;
export const MAX_FILTERED_DRAWS = 256;

export interface SvgCost {
  /** Elements drawn, each `<use>` counting its target's elements again, and each marker its content once a vertex it marks. */
  elements: number;
  /** How many times a filter (blur, shadow, lighting…) is applied: once per filtered element drawn, to all it draws. */
  filtered: number;
  /** Pixels of the rasters it embeds as data: URLs, each decoded whole whatever size it is drawn at. */
  pixels: number;
}

interface Node {
  children: number[];
  /** The id a `<use>` draws, without its `#`. */
  uses?: string;
  filtered: boolean;
  /** A `<marker>`, drawn only where a shape marks a vertex with it. */
  marker: boolean;
  /**
   * The ids of the markers it sets. Markers inherit: every vertex it draws takes them, its
   * descendants' and a `<use>`'s target's too.
   */
  markers: string[];
  /** At most how many vertices of its own can take a marker (a path, line, polyline or polygon). */
  vertices: number;
  /** What the images it embeds draw, SVGs drawn as documents of their own. */
  embedded?: { elements: number; filtered: number };
}

const XLINK = "http://www.w3.org/1999/xlink";
const XMLNS = "http://www.w3.org/2000/xmlns/";

/**
 * The cost of drawing `source`, or why it cannot be counted: a reference cycle, or a file this
 * parser does not read whole. saxes expands no entity, where librsvg expands those a document
 * type declares (a whole drawing may hide in one), so such a file, and anything saxes finds not
 * well-formed, is refused rather than counted by the part before it. librsvg also reads other
 * documents from data: URLs wherever a URL may be (`<use>`, `url()` fills, filters and markers,
 * stylesheets, XInclude), which would draw what is not counted here: only images may embed one.
 */
export async function svgCost(source: string): Promise<SvgCost | string> {
  const nodes: Node[] = [];
  const ids = new Map<string, number>();
  const open: number[] = [];
  const images: Array<{ node: number; url: URL }> = [];
  const parser = new SaxesParser({ xmlns: true, position: false });
  let unread: string | null = null;
  // A stylesheet may set filters or markers on any element by selector: then every element
  // counts as filtered, and a file with markers is refused (markers set so would mark the
  // shapes inside markers too, which librsvg draws again within every marker it draws).
  let styledFilters = false;
  let styledMarkers = false;
  let stylesheet: { node: number; text: string } | null = null;
  // Open elements that set markers: a `<marker>` inside one takes them too, at every vertex of
  // its content each time it is drawn, which counting them once where they are set would miss.
  let marking = 0;
  parser.on("error", (error) => {
    unread ??= `the SVG is not well-formed XML (${error.message.split("\n")[0]})`;
  });
  parser.on("doctype", (doctype) => {
    if (doctype.includes("[")) unread ??= "the SVG declares entities (a document type with an internal subset)";
  });
  parser.on("processinginstruction", ({ body }) => {
    if (mentionsDataUrl(body)) unread ??= ANOTHER_DOCUMENT;
  });
  parser.on("text", (text) => {
    if (stylesheet) stylesheet.text += text;
  });
  parser.on("cdata", (text) => {
    if (stylesheet) stylesheet.text += text;
  });
  parser.on("opentag", (tag) => {
    const index = nodes.length;
    const attribute = (name: string) => tag.attributes[name]?.value;
    const hrefs = Object.values(tag.attributes).filter(isHref);
    // As SVG 2 says and librsvg does: `href` wins over `xlink:href`, whatever prefix that is written with.
    const href = (hrefs.find((link) => link.uri === "") ?? hrefs[0])?.value;
    const drawsImage = tag.local === "image" || tag.local === "feImage";
    for (const attribute of Object.values(tag.attributes)) {
      if (attribute.uri === XMLNS) continue;
      if (drawsImage && isHref(attribute)) {
        // librsvg is given the file's bytes and no address to resolve against: of the URLs an
        // image names, it loads data: URLs only, never a file or anything on the network.
        const url = URL.canParse(attribute.value) ? new URL(attribute.value) : null;
        if (url?.protocol === "data:") images.push({ node: index, url });
      } else if (isHref(attribute) ? tag.local !== "a" && mentionsDataUrl(attribute.value) : loadsDataUrl(attribute.value))
        unread ??= ANOTHER_DOCUMENT;
    }
    const style = cssText(attribute("style") ?? "");
    // `marker` alone is a CSS shorthand, not a presentation attribute.
    const markerText =
      cssText([attribute("marker-start"), attribute("marker-mid"), attribute("marker-end")].join(" ")) +
      [...style.matchAll(MARKER_DECLARATION)].map(([, value]) => value).join(" ");
    const markers = [...markerText.matchAll(LOCAL_URL)].map(([, id]) => id!);
    if (tag.local === "marker" && marking > 0) unread ??= "the SVG sets markers on an element holding a <marker>";
    nodes.push({
      children: [],
      uses: tag.local === "use" && href?.startsWith("#") ? href.slice(1) : undefined,
      filtered: attribute("filter") !== undefined || /(^|;)\s*filter\s*:/i.test(style),
      marker: tag.local === "marker",
      markers,
      vertices:
        tag.local === "line"
          ? 2
          : tag.local === "path"
            ? vertexBound(attribute("d"))
            : tag.local === "polyline" || tag.local === "polygon"
              ? vertexBound(attribute("points"))
              : 0,
    });
    const id = attribute("id");
    if (id !== undefined && !ids.has(id)) ids.set(id, index);
    const parent = open.at(-1);
    if (parent !== undefined) nodes[parent]!.children.push(index);
    open.push(index);
    if (markers.length > 0) marking++;
    if (tag.local === "style") stylesheet ??= { node: index, text: "" };
  });
  parser.on("closetag", () => {
    const index = open.pop()!;
    if (nodes[index]!.markers.length > 0) marking--;
    if (stylesheet?.node !== index) return;
    const css = cssText(stylesheet.text);
    if (/filter/i.test(css)) styledFilters = true;
    if (/marker(?:-start|-mid|-end)?\s*:\s*url\(/i.test(css)) styledMarkers = true;
    if (loadsDataUrl(css)) unread ??= ANOTHER_DOCUMENT;
    stylesheet = null;
  });
  try {
    parser.write(source).close();
  } catch (error) {
    unread ??= `the SVG is not well-formed XML (${(error as Error).message.split("\n")[0]})`;
  }
  if (unread) return unread;
  if (nodes.length === 0) return { elements: 0, filtered: 0, pixels: 0 };
  if (styledMarkers && nodes.some((node) => node.marker)) return "the SVG sets markers from a stylesheet";

  let pixels = 0;
  for (const { node, url } of images) {
    const image = await embeddedCost(url);
    if (typeof image === "string") return image;
    const { embedded } = nodes[node]!;
    nodes[node]!.embedded = { elements: (embedded?.elements ?? 0) + image.elements, filtered: (embedded?.filtered ?? 0) + image.filtered };
    pixels += image.pixels;
  }

  // Post-order over the tree, its references and its markers, without recursion (nesting may
  // be deep); a reference back into an element still being counted is a cycle.
  const cost: Array<{ elements: number; filtered: number; vertices: number } | undefined> = new Array(nodes.length);
  const counting = new Uint8Array(nodes.length);
  const markerNodes = (node: Node) =>
    node.markers.map((id) => ids.get(id)).filter((index): index is number => index !== undefined && nodes[index]!.marker);
  const stack = [0];
  while (stack.length > 0) {
    const index = stack.at(-1)!;
    const node = nodes[index]!;
    const target = node.uses !== undefined ? ids.get(node.uses) : undefined;
    const drawn = target === undefined ? node.children : [...node.children, target];
    const markers = markerNodes(node);
    if (!counting[index]) {
      counting[index] = 1;
      for (const next of [...drawn, ...markers]) {
        if (cost[next] === undefined) {
          if (counting[next]) return CYCLE;
          stack.push(next);
        }
      }
      continue;
    }
    stack.pop();
    if (cost[index] !== undefined) continue;
    let elements = 1 + (node.embedded?.elements ?? 0);
    let filtered = (node.filtered ? 1 : 0) + (node.embedded?.filtered ?? 0);
    let vertices = node.vertices;
    for (const next of drawn) {
      const part = cost[next];
      if (part === undefined) return CYCLE;
      elements += part.elements;
      filtered += part.filtered;
      vertices += part.vertices;
    }
    // At each vertex one marker is drawn (its start, mid or end marker): the costliest, as a bound.
    let marker = { elements: 0, filtered: 0 };
    for (const next of markers) {
      const part = cost[next];
      if (part === undefined) return CYCLE;
      marker = { elements: Math.max(marker.elements, part.elements), filtered: Math.max(marker.filtered, part.filtered) };
    }
    elements += vertices * marker.elements;
    filtered += vertices * marker.filtered;
    // Capped, so that a file of exponential cost cannot overflow the count.
    cost[index] = {
      elements: Math.min(elements, Number.MAX_SAFE_INTEGER),
      filtered: Math.min(filtered, Number.MAX_SAFE_INTEGER),
      vertices: Math.min(vertices, Number.MAX_SAFE_INTEGER),
    };
  }
  const total = cost[0]!;
  return { elements: total.elements, filtered: styledFilters ? total.elements : total.filtered, pixels };
}

const CYCLE = "the SVG references itself (a <use> or marker cycle)";
const ANOTHER_DOCUMENT = "the SVG refers to another document in a data: URL (only an image may embed one)";
/** A reference to an element of the same file, as CSS writes it: `url(#id)`. */
const LOCAL_URL = /url\(\s*['"]?#([^'")\s]+)/g;
/** A marker property's value in CSS (`marker: none` sets none; `fill: url(#g)` is no marker). */
const MARKER_DECLARATION = /marker(?:-start|-mid|-end)?\s*:\s*([^;]*)/gi;
/** What a number or a closepath in path data or a list of points looks like. */
const VERTEX_PART = /[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?|z/gi;
/** A CSS escape (CSS Syntax 3 §4.3.7): hex digits and one optional whitespace, an escaped newline, or any other character. */
const CSS_ESCAPE = /\\(?:([0-9a-f]{1,6})[ \t\n\r\f]?|(\r\n|[\n\r\f])|([^]))/gi;

/** A link to another element or file: `href`, with no namespace or the XLink one, whatever its prefix. */
function isHref(attribute: SaxesAttributeNS): boolean {
  return attribute.local === "href" && (attribute.uri === "" || attribute.uri === XLINK);
}

/**
 * At most how many vertices path data or a list of points has: every vertex takes at least one
 * number (`h` and `v` take one, a move or line two, a curve more), a closepath none but adds one.
 */
function vertexBound(geometry = ""): number {
  let count = 0;
  for (const _ of geometry.matchAll(VERTEX_PART)) count++;
  return count;
}

/** CSS text as librsvg's parser reads it, escapes decoded: `fi\6cter` is a filter. */
function cssText(text: string): string {
  if (!text.includes("\\")) return text;
  return text.replace(CSS_ESCAPE, (_, hex: string | undefined, newline: string | undefined, other: string | undefined) => {
    if (hex === undefined) return newline !== undefined ? "" : other!;
    const codePoint = Number.parseInt(hex, 16);
    return codePoint === 0 || codePoint > 0x10ffff || (codePoint >= 0xd800 && codePoint <= 0xdfff)
      ? "\ufffd"
      : String.fromCodePoint(codePoint);
  });
}

/** Whether text names a data: URL, however it is written: CSS escapes decoded, and without the tabs and newlines a URL parser skips (WHATWG URL, basic URL parser). */
function mentionsDataUrl(text: string): boolean {
  return /data:/i.test(cssText(text).replace(/[\t\n\r]/g, ""));
}

/**
 * Whether CSS or a presentation attribute has librsvg load a data: URL: in `url(…)` or an
 * `@import`, but not a web font's (`@font-face`, which librsvg never loads), nor text that
 * merely says "data:" (`aria-label="metadata: none"`).
 */
function loadsDataUrl(text: string): boolean {
  const css = cssText(text)
    .replace(/[\t\n\r]/g, "")
    .replace(/@font-face\s*\{[^}]*\}/gi, "");
  return /url\(\s*['"]?\s*data:/i.test(css) || /@import\s+['"]\s*data:/i.test(css);
}

/**
 * What an image embedded as a data: URL costs: a raster its pixels (sharp reads only its
 * header), anything else the drawing of the SVG it would be, since librsvg draws one as a
 * document of its own, whatever type the URL names.
 */
async function embeddedCost(url: URL): Promise<SvgCost | string> {
  let bytes: Buffer;
  try {
    // fetch decodes a data: URL as the Fetch standard says (base64 or percent-encoded); it goes nowhere.
    bytes = Buffer.from(await (await fetch(url)).arrayBuffer());
  } catch {
    return "the SVG embeds an image whose data: URL cannot be decoded";
  }
  const metadata = await sharp(bytes, { limitInputPixels: false })
    .metadata()
    .catch(() => null);
  if (metadata && metadata.format !== "svg") return { elements: 0, filtered: 0, pixels: (metadata.width ?? 0) * (metadata.height ?? 0) };
  const cost = await svgCost(bytes.toString("utf8"));
  return typeof cost === "string" ? `in an image it embeds, ${cost}` : cost;
}

/** Why a vector must not be drawn, or null when it may: `maxPixels` bounds the rasters it embeds, in all. */
export async function svgTooCostly(source: string, maxPixels: number): Promise<string | null> {
  const cost = await svgCost(source);
  if (typeof cost === "string") return cost;
  if (cost.elements > MAX_DRAWN_ELEMENTS)
    return `the SVG draws ${cost.elements.toLocaleString("en")} elements (at most ${MAX_DRAWN_ELEMENTS.toLocaleString("en")})`;
  if (cost.filtered > MAX_FILTERED_DRAWS)
    return `the SVG applies filters ${cost.filtered.toLocaleString("en")} times (at most ${MAX_FILTERED_DRAWS})`;
  if (cost.pixels > maxPixels)
    return `the SVG embeds images of ${megapixels(cost.pixels)} megapixels in all (at most ${megapixels(maxPixels)})`;
  return null;
}

const megapixels = (pixels: number) => (pixels / 1_000_000).toLocaleString("en", { maximumFractionDigits: 1 });
