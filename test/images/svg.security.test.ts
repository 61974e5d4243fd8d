import { describe, expect, it } from "vitest";
import { sanitiseSvg } from "../../src/images/svg";

/** These run inside workerd, as the Worker would sanitise a discovered SVG. */
const svg = (body: string, attributes = "") =>
  `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10"${attributes}>${body}</svg>`;
const clean = (source: string) => {
  const result = sanitiseSvg(source);
  if (!result.ok) throw new Error(result.reason);
  return result.svg;
};
const drawing = '<path d="M0 0h10v10H0z" fill="#c00"></path>';

describe("SVG sanitising against hostile files", () => {
  it.each([
    ["a script element", svg(`<script>alert(1)</script>${drawing}`), /script|alert/i],
    ["a script hidden in CDATA", svg(`<script><![CDATA[alert(1)]]></script>${drawing}`), /script|alert/i],
    ["an onload handler", svg(drawing, ' onload="alert(1)"'), /onload|alert/i],
    [
      "event handlers on any element",
      svg('<path d="M0 0h1v1z" onclick="alert(1)" onMouseOver="alert(2)"></path>'),
      /onclick|onmouseover|alert/i,
    ],
    ["a javascript: link", svg(`<a href="javascript:alert(1)">${drawing}</a>`), /javascript|<a/i],
    ["a javascript: xlink:href", svg(`<a xlink:href=" jav&#x09;ascript:alert(1)">${drawing}</a>`), /ascript|<a/i],
    [
      "an external <use>",
      svg('<use href="https://evil.example/sprite.svg#x"></use><use xlink:href="//evil.example/s.svg#y"></use>'),
      /evil\.example/,
    ],
    [
      "a foreignObject",
      svg(
        `<foreignObject width="10" height="10"><iframe xmlns="http://www.w3.org/1999/xhtml" src="https://evil.example"></iframe></foreignObject>${drawing}`,
      ),
      /foreignObject|iframe|evil/i,
    ],
    ["an external image", svg('<image href="https://evil.example/track.png" width="1" height="1"></image>'), /evil\.example/],
    [
      "a url() to elsewhere",
      svg('<path d="M0 0h1v1z" fill="url(https://evil.example/x.svg#g)" filter="url(&quot;//evil.example/f#a&quot;)"></path>'),
      /evil\.example/,
    ],
    [
      "CSS that imports or fetches",
      svg(
        `<style>@import url(https://evil.example/x.css); path{fill:red}</style><style>path{background:url(//evil.example/p)}</style>${drawing}`,
      ),
      /evil\.example|@import/,
    ],
    ["a style attribute that fetches", svg('<path d="M0 0h1v1z" style="fill:url(https://evil.example/#g)"></path>'), /evil\.example/],
    [
      "a CSS escape spelling url(",
      svg('<path d="M0 0h1v1z" fill="\\75 rl(https://evil.example/#g)" style="fill:u\\rl(//evil.example/#h)"></path>'),
      /evil\.example/,
    ],
    [
      "a CSS escape spelling @import in <style>",
      svg(`<style>@\\69mport "https://evil.example/x.css"; path{fill:red}</style>${drawing}`),
      /evil\.example|mport/,
    ],
    [
      "a CSS escape spelling url( in <style>",
      svg(
        `<style>svg{background:u\\72l(https://evil.example/t.png)}</style><style>svg{background:\\75rl(//evil.example/u.png)}</style>${drawing}`,
      ),
      /evil\.example/,
    ],
    [
      "image-set() and image() in <style>",
      svg(
        `<style>svg{background-image:image-set("https://evil.example/t.png" 1x)}</style><style>svg{background:-webkit-image-set('//evil.example/w.png' 1x)}</style><style>svg{background:image("https://evil.example/i.png")}</style>${drawing}`,
      ),
      /evil\.example/,
    ],
    [
      "image-set() in a style attribute",
      svg(
        `<path d="M0 0h1v1z" style="background-image:image-set('https://evil.example/t.png' 1x)"></path><g style="background:-webkit-image-set(&quot;//evil.example/w.png&quot; 2x)">${drawing}</g>`,
      ),
      /evil\.example|image-set/,
    ],
    [
      "xml:base and foreign attributes",
      svg(`<g xml:base="https://evil.example/" inkscape:label="x" xmlns:inkscape="urn:x">${drawing}</g>`),
      /evil\.example|inkscape/,
    ],
  ])("removes %s and keeps the drawing", (_, source, forbidden) => {
    const out = clean(source);
    expect(out).not.toMatch(forbidden);
    expect(out).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    if (source.includes(drawing)) expect(out).toContain(drawing);
  });

  it("refuses entity declarations (no expansion, no billion laughs) and undeclared entities", () => {
    const laughs =
      '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>' +
      svg("<text>&c;</text>");
    expect(sanitiseSvg(laughs)).toEqual({ ok: false, reason: expect.stringContaining("internal subset") });
    const external = `<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]>${svg("<text>&x;</text>")}`;
    expect(sanitiseSvg(external).ok).toBe(false);
    expect(sanitiseSvg(svg("<text>&nbsp;</text>")).ok).toBe(false);
  });

  it("refuses what is not a well-formed SVG document", () => {
    for (const source of [
      "",
      "<html><script>alert(1)</script></html>",
      "<svg><path></svg>",
      "not xml at all",
      `${svg(drawing)}<svg></svg>`,
    ]) {
      expect(sanitiseSvg(source).ok, source).toBe(false);
    }
  });

  it("keeps what logos are made of: styles, gradients, clip paths, internal references, embedded rasters, text", () => {
    const style =
      '.cls-1{fill:#231f20;stroke:#fff;stroke-width:.5}.cls-2{fill:url(#g);filter:url("#f")} @font-face{font-family:Brand;src:local("Brand Sans")} text{font-family:Brand,sans-serif}';
    const source = svg(
      `<style>${style}</style>` +
        '<defs><linearGradient id="g" x1="0" x2="1"><stop offset="0" stop-color="#222357"></stop><stop offset="1" stop-color="#254aa5"></stop></linearGradient>' +
        '<clipPath id="c"><rect width="5" height="5"></rect></clipPath><path id="p" d="M0 0h2v2z"></path></defs>' +
        '<g clip-path="url(#c)" style="fill:url(#g)"><use xlink:href="#p"></use><use href="#p" x="3"></use></g>' +
        '<image href="data:image/png;base64,iVBORw0KGgo=" width="1" height="1"></image><text x="1" y="9">A &amp; B &lt;3</text>',
    );
    const out = clean(source);
    for (const part of [
      `<style>${style}</style>`,
      'stop-color="#254aa5"',
      'clip-path="url(#c)"',
      'style="fill:url(#g)"',
      'xlink:href="#p"',
      'href="#p"',
      "data:image/png;base64,",
      "A &amp; B &lt;3",
    ]) {
      expect(out).toContain(part);
    }
    // The result is itself acceptable to the sanitiser: well-formed, nothing left to remove.
    expect(clean(out)).toBe(out);
  });

  it("unwraps links, keeping their drawing", () => {
    expect(clean(svg(`<a href="https://example.com">${drawing}</a>`))).toBe(
      `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10">${drawing}</svg>`,
    );
  });
});
