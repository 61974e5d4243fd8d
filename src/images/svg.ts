import { SaxesParser, type SaxesTagPlain } from "saxes";

/**
 * SVG sanitising, for serving a logo's vector original as `image/svg+xml`. Pure and
 * runtime-agnostic (saxes, a strict streaming XML parser without DOM or native code), so the
 * Node importer and the Worker sanitise the same way.
 *
 * An allowlist of drawing elements is kept and everything else is dropped with its content:
 * `script`, `foreignObject`, `iframe`, editor metadata, unknown elements. Kept elements lose
 * event handlers (`on*`), references to anything outside the document (`href` other than
 * `#fragment`, except `data:` raster images in `<image>`; `url(…)` other than `url(#…)`),
 * `javascript:` anywhere, `xml:base`, foreign-namespace attributes, and any attribute with a
 * backslash (a CSS escape could spell what is looked for). A `<style>` that imports or fetches
 * anything (`url(…)` other than `url(#…)`, `image-set(…)`), or has a backslash, is dropped
 * whole. A document type with an internal subset (where entities are declared) makes the whole
 * file refused: entities are never expanded, so nothing can multiply. Anything that is not
 * well-formed XML with an `<svg>` root is refused as well.
 *
 * The route that serves the result adds a Content-Security-Policy forbidding scripts, so a
 * browser that opens the file directly runs nothing even if something slipped through.
 */
const SVG_NS = "http://www.w3.org/2000/svg";
const XLINK_NS = "http://www.w3.org/1999/xlink";

const ELEMENTS = new Set([
  "svg",
  "g",
  "defs",
  "title",
  "desc",
  "symbol",
  "use",
  "switch",
  "path",
  "rect",
  "circle",
  "ellipse",
  "line",
  "polyline",
  "polygon",
  "text",
  "tspan",
  "textPath",
  "linearGradient",
  "radialGradient",
  "stop",
  "clipPath",
  "mask",
  "pattern",
  "marker",
  "image",
  "style",
  "filter",
  "feBlend",
  "feColorMatrix",
  "feComponentTransfer",
  "feComposite",
  "feConvolveMatrix",
  "feDiffuseLighting",
  "feDisplacementMap",
  "feDistantLight",
  "feDropShadow",
  "feFlood",
  "feFuncA",
  "feFuncB",
  "feFuncG",
  "feFuncR",
  "feGaussianBlur",
  "feMerge",
  "feMergeNode",
  "feMorphology",
  "feOffset",
  "fePointLight",
  "feSpecularLighting",
  "feSpotLight",
  "feTile",
  "feTurbulence",
]);
/** Elements dropped without their content being dropped: a link's drawing stays, the link goes. */
const UNWRAPPED = new Set(["a"]);

const PREFIXED_ATTRIBUTES = new Set(["xlink:href", "xml:space", "xml:lang", "xmlns:xlink"]);
const LOCAL_URL = /url\(\s*(['"]?)\s*#/gi;
/** CSS functions that also fetch an address written as a plain string (CSS Images 4: `image()`, `image-set()`, `-webkit-image-set()`). */
const FETCHES_BY_STRING = /image(?:-set)?\(/;
const DATA_IMAGE = /^data:image\/(png|jpeg|gif|webp);base64,[a-z0-9+/=\s]*$/i;

export type SanitisedSvg = { ok: true; svg: string } | { ok: false; reason: string };

export function sanitiseSvg(source: string): SanitisedSvg {
  const out: string[] = [];
  // Depth inside a dropped element (its whole content goes), and the open elements kept.
  let dropping = 0;
  const open: Array<{ name: string; kept: boolean }> = [];
  let root = false;
  let styleText: string[] | null = null;
  let refusal: string | null = null;

  const parser = new SaxesParser({ xmlns: false, position: false });
  parser.on("error", (error) => {
    refusal ??= `not well-formed XML: ${error.message.split("\n")[0]}`;
  });
  parser.on("doctype", (doctype) => {
    if (doctype.includes("[")) refusal ??= "document type with an internal subset (entity declarations)";
  });
  parser.on("opentag", (tag) => {
    if (!root) {
      root = true;
      if (tag.name !== "svg") refusal ??= `root element is <${tag.name}>, not <svg>`;
    }
    if (dropping > 0 || !ELEMENTS.has(tag.name)) {
      if (dropping > 0 || !UNWRAPPED.has(tag.name)) dropping++;
      open.push({ name: tag.name, kept: false });
      return;
    }
    open.push({ name: tag.name, kept: true });
    if (tag.name === "style") {
      styleText = [];
      return;
    }
    out.push(`<${tag.name}${attributes(tag, open.length === 1)}>`);
  });
  parser.on("closetag", () => {
    const element = open.pop()!;
    if (!element.kept) {
      if (dropping > 0) dropping--;
      return;
    }
    if (element.name === "style") {
      const css = (styleText ?? []).join("");
      styleText = null;
      if (safeCss(css)) out.push(`<style>${escapeText(css)}</style>`);
      return;
    }
    out.push(`</${element.name}>`);
  });
  const text = (value: string) => {
    if (dropping > 0) return;
    if (styleText) styleText.push(value);
    else out.push(escapeText(value));
  };
  parser.on("text", text);
  parser.on("cdata", text);

  try {
    parser.write(source).close();
  } catch (error) {
    refusal ??= `not well-formed XML: ${(error as Error).message.split("\n")[0]}`;
  }
  if (refusal) return { ok: false, reason: refusal };
  if (!root) return { ok: false, reason: "no <svg> element" };
  return { ok: true, svg: out.join("") };
}

function attributes(tag: SaxesTagPlain, isRoot: boolean): string {
  const kept: string[] = [];
  let namespace = false;
  let xlink = false;
  for (const [name, value] of Object.entries(tag.attributes)) {
    if (!keepAttribute(tag.name, name, value)) continue;
    if (name === "xmlns") {
      if (value !== SVG_NS) continue;
      namespace = true;
    }
    if (name === "xmlns:xlink") {
      if (value !== XLINK_NS) continue;
      xlink = true;
    }
    kept.push(` ${name}="${escapeAttribute(value)}"`);
  }
  // Served on its own, the file must name the SVG namespace (and xlink's, if it uses xlink:href).
  if (isRoot && !namespace) kept.unshift(` xmlns="${SVG_NS}"`);
  if (isRoot && !xlink) kept.push(` xmlns:xlink="${XLINK_NS}"`);
  return kept.join("");
}

function keepAttribute(element: string, name: string, value: string): boolean {
  const lower = name.toLowerCase();
  if (lower.startsWith("on")) return false;
  if (name.includes(":") && !PREFIXED_ATTRIBUTES.has(name)) return false;
  // Presentation attributes are CSS values, where escapes could spell what the checks below look for.
  if (value.includes("\\")) return false;
  const compact = value.replace(/[\s\u0000-\u001f]+/g, "").toLowerCase();
  if (compact.includes("javascript:") || compact.includes("vbscript:")) return false;
  if (lower === "href" || lower === "xlink:href") {
    if (value.trim().startsWith("#")) return true;
    return element === "image" && DATA_IMAGE.test(value.trim());
  }
  // Every url(…) must point into the document itself, and nothing may fetch by a string.
  const urls = compact.split("url(").length - 1;
  if (urls > 0 && urls !== (value.match(LOCAL_URL) ?? []).length) return false;
  if (FETCHES_BY_STRING.test(compact)) return false;
  if (lower === "style") return safeCss(value);
  return true;
}

/** CSS without escapes, imports, external urls, or legacy script hooks. */
function safeCss(css: string): boolean {
  // An escape spells any letter (`@\69mport`, `u\72l(`): refused, as in attributes, rather than decoded.
  if (css.includes("\\")) return false;
  const lower = css.toLowerCase();
  if (/@import|expression\s*\(|javascript:|behavior\s*:|-moz-binding/.test(lower) || FETCHES_BY_STRING.test(lower)) return false;
  const urls = lower.split("url(").length - 1;
  return urls === (css.match(LOCAL_URL) ?? []).length;
}

const escapeText = (text: string) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
const escapeAttribute = (text: string) => escapeText(text).replaceAll('"', "&quot;");
