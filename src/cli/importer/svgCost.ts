import { SaxesParser } from "saxes";

/**
 * What drawing an SVG would cost, counted before librsvg draws it: librsvg renders a file in
 * one call that nothing interrupts (sharp's timeout of 3 s did not stop a 100 s render), so a
 * file that multiplies its drawing through `<use>` (each reference draws its target again,
 * references of references multiply) would hold a conversion thread for minutes.
 * Ten thousand blurred circles made of four levels of ten references each took longer than
 * 100 s at the master's size. librsvg's own bound is 500,000 referenced elements; a logo
 * draws a few thousand at most, and blurs or shadows a handful.
 */
export const MAX_DRAWN_ELEMENTS = 50_000;
export const MAX_FILTERED_DRAWS = 256;

export interface SvgCost {
  /** Elements drawn, each `<use>` counting its target's elements again. */
  elements: number;
  /** How many times a filter (blur, shadow, lighting…) is applied: once per filtered element drawn, to all it draws. */
  filtered: number;
}

interface Node {
  children: number[];
  /** The id a `<use>` draws, without its `#`. */
  uses?: string;
  filtered: boolean;
}

/**
 * The cost of drawing `source`, or why it cannot be counted: a reference cycle, or a file this
 * parser does not read whole. saxes expands no entity, where librsvg expands those a document
 * type declares (a whole drawing may hide in one), so such a file, and anything saxes finds not
 * well-formed, is refused rather than counted by the part before it.
 */
export function svgCost(source: string): SvgCost | string {
  const nodes: Node[] = [];
  const ids = new Map<string, number>();
  const open: number[] = [];
  const parser = new SaxesParser({ xmlns: false, position: false });
  let unread: string | null = null;
  // A stylesheet may set filters on any element by selector: then every element counts as filtered.
  let styledFilters = false;
  let inStyle = false;
  parser.on("error", (error) => {
    unread ??= `the SVG is not well-formed XML (${error.message.split("\n")[0]})`;
  });
  parser.on("doctype", (doctype) => {
    if (doctype.includes("[")) unread ??= "the SVG declares entities (a document type with an internal subset)";
  });
  parser.on("text", (text) => {
    if (inStyle && /filter/i.test(text)) styledFilters = true;
  });
  parser.on("cdata", (text) => {
    if (inStyle && /filter/i.test(text)) styledFilters = true;
  });
  parser.on("opentag", (tag) => {
    inStyle = tag.name.endsWith("style");
    const index = nodes.length;
    const attributes = tag.attributes as Record<string, string>;
    const href = attributes.href ?? attributes["xlink:href"];
    const style = attributes.style ?? "";
    nodes.push({
      children: [],
      uses: tag.name.endsWith("use") && href?.startsWith("#") ? href.slice(1) : undefined,
      filtered: attributes.filter !== undefined || /(^|;)\s*filter\s*:/.test(style),
    });
    if (attributes.id !== undefined && !ids.has(attributes.id)) ids.set(attributes.id, index);
    const parent = open.at(-1);
    if (parent !== undefined) nodes[parent]!.children.push(index);
    open.push(index);
  });
  parser.on("closetag", () => {
    inStyle = false;
    open.pop();
  });
  try {
    parser.write(source).close();
  } catch (error) {
    unread ??= `the SVG is not well-formed XML (${(error as Error).message.split("\n")[0]})`;
  }
  if (unread) return unread;
  if (nodes.length === 0) return { elements: 0, filtered: 0 };

  // Post-order over the tree and its references, without recursion (nesting may be deep);
  // a reference back into an element still being counted is a cycle.
  const cost: Array<SvgCost | undefined> = new Array(nodes.length);
  const counting = new Uint8Array(nodes.length);
  const stack = [0];
  while (stack.length > 0) {
    const index = stack.at(-1)!;
    const node = nodes[index]!;
    const target = node.uses !== undefined ? ids.get(node.uses) : undefined;
    const needed = target === undefined ? node.children : [...node.children, target];
    if (!counting[index]) {
      counting[index] = 1;
      for (const next of needed) {
        if (cost[next] === undefined) {
          if (counting[next]) return CYCLE;
          stack.push(next);
        }
      }
      continue;
    }
    stack.pop();
    if (cost[index] !== undefined) continue;
    let elements = 1;
    let filtered = node.filtered ? 1 : 0;
    for (const next of needed) {
      const part = cost[next];
      if (part === undefined) return CYCLE;
      elements += part.elements;
      filtered += part.filtered;
    }
    // Capped, so that a file of exponential cost cannot overflow the count.
    cost[index] = { elements: Math.min(elements, Number.MAX_SAFE_INTEGER), filtered: Math.min(filtered, Number.MAX_SAFE_INTEGER) };
  }
  const total = cost[0]!;
  return styledFilters ? { elements: total.elements, filtered: total.elements } : total;
}

const CYCLE = "the SVG references itself (a <use> cycle)";

/** Why a vector must not be drawn, or null when it may. */
export function svgTooCostly(source: string): string | null {
  const cost = svgCost(source);
  if (typeof cost === "string") return cost;
  if (cost.elements > MAX_DRAWN_ELEMENTS) return `the SVG draws ${cost.elements.toLocaleString("en")} elements (at most ${MAX_DRAWN_ELEMENTS.toLocaleString("en")})`;
  if (cost.filtered > MAX_FILTERED_DRAWS) return `the SVG applies filters ${cost.filtered.toLocaleString("en")} times (at most ${MAX_FILTERED_DRAWS})`;
  return null;
}
