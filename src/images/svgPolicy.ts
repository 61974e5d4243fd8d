/**
 * Served SVG is a document a browser may open on its own: this policy forbids scripts, plugins
 * and every fetch (inline styles and `data:` images, which sanitised logos may use, excepted),
 * whatever the file contains.
 */
export const SVG_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox";

/** What every SVG answer carries: the policy, and no second guess of its type. */
export const SVG_HEADERS = { "Content-Security-Policy": SVG_POLICY, "X-Content-Type-Options": "nosniff" } as const;
