import { SaxesParser } from "saxes";

/**
 * What drawing an SVG would cost, counted before librsvg draws it: librsvg renders a file in
 * one call that nothing can interrupt (sharp's timeout is checked between tiles, and a vector
 * is one), so a file that multiplies its drawing through `<use>` (each reference draws its
 * target again, references of references multiply) would hold a conversion thread for minutes.
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

/** The cost of drawing `source`, or null when it cannot be drawn at all (a reference cycle). Not well-formed XML costs nothing: librsvg refuses it. */
export function svgCost(source: string): SvgCost | null {
  const nodes: Node[] = [];
  const ids = new Map<string, number>();
  const open: number[] = [];
  const parser = new SaxesParser({ xmlns: false, position: false });
  let broken = false;
  parser.on("error", () => {
    broken = true;
  });
  parser.on("opentag", (tag) => {
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
    open.pop();
  });
  try {
    parser.write(source).close();
  } catch {
    broken = true;
  }
  if (broken || nodes.length === 0) return { elements: nodes.length, filtered: 0 };

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
          if (counting[next]) return null;
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
      if (part === undefined) return null;
      elements += part.elements;
      filtered += part.filtered;
    }
    // Capped, so that a file of exponential cost cannot overflow the count.
    cost[index] = { elements: Math.min(elements, Number.MAX_SAFE_INTEGER), filtered: Math.min(filtered, Number.MAX_SAFE_INTEGER) };
  }
  return cost[0]!;
}

/** Why a vector must not be drawn, or null when it may. */
export function svgTooCostly(source: string): string | null {
  const cost = svgCost(source);
  if (!cost) return "the SVG references itself (a <use> cycle)";
  if (cost.elements > MAX_DRAWN_ELEMENTS) return `the SVG draws ${cost.elements.toLocaleString("en")} elements (at most ${MAX_DRAWN_ELEMENTS.toLocaleString("en")})`;
  if (cost.filtered > MAX_FILTERED_DRAWS) return `the SVG applies filters ${cost.filtered.toLocaleString("en")} times (at most ${MAX_FILTERED_DRAWS})`;
  return null;
}
