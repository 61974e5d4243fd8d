import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { Logo, logoUrl } from "../../packages/sdk/src/react";

/** `<Logo>` from @logo-lookup/sdk/react, rendered as React renders it on a server. */
const TOKEN = `pk_${"a".repeat(32)}`;
const attributes = (markup: string) =>
  Object.fromEntries([...markup.matchAll(/ ([\w-]+)="([^"]*)"/g)].map(([, name, value]) => [name, value!.replaceAll("&amp;", "&")]));

describe("<Logo>", () => {
  it("is an img of the lookup URL with a second density, lazy, sized and described", () => {
    const markup = renderToStaticMarkup(
      createElement(Logo, { domain: "Stripe.com ", token: TOKEN, baseUrl: "https://logos.example.com/", size: 48, theme: "dark" }),
    );
    expect(markup.startsWith("<img ")).toBe(true);
    expect(attributes(markup)).toEqual({
      loading: "lazy",
      decoding: "async",
      src: `https://logos.example.com/stripe.com?token=${TOKEN}&size=48&theme=dark&fallback=monogram`,
      srcSet: `https://logos.example.com/stripe.com?token=${TOKEN}&size=48&dpr=2&theme=dark&fallback=monogram 2x`,
      width: "48",
      height: "48",
      alt: "stripe.com logo",
    });
  });

  it("takes the page's own alt (empty for a decorative logo), height, format and img attributes", () => {
    const markup = renderToStaticMarkup(
      createElement(Logo, {
        domain: "github.com",
        token: TOKEN,
        baseUrl: "https://logos.example.com",
        alt: "",
        height: 40,
        format: "webp",
        className: "brand",
        greyscale: true,
      }),
    );
    const img = attributes(markup);
    expect(img).toMatchObject({ alt: "", height: "40", width: "64", class: "brand" });
    expect(img.src).toBe(`https://logos.example.com/github.com?token=${TOKEN}&size=64&greyscale=true&format=webp&fallback=monogram`);
  });

  it("asks for no monogram when the page brings its own fallback, or none", () => {
    expect(logoUrl({ domain: "x.com", token: TOKEN, baseUrl: "https://l.example.com", fallback: "/placeholder.svg" })).toContain(
      "fallback=none",
    );
    expect(logoUrl({ domain: "x.com", token: TOKEN, baseUrl: "https://l.example.com", fallback: null })).toContain("fallback=none");
    expect(() => logoUrl({ domain: "x.com", token: TOKEN, baseUrl: "https://l.example.com", size: 801 })).toThrow(RangeError);
  });
});
