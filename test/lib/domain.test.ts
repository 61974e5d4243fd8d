import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { normaliseDomain, registrableDomain } from "../../src/lib/domain";

describe("normaliseDomain", () => {
  it.each([
    ["github.com", "github.com"],
    ["GitHub.COM", "github.com"],
    ["www.github.com", "github.com"],
    ["github.com.", "github.com"],
    ["github.com\u3002", "github.com"],
    ["github.com\uFF0E", "github.com"],
    ["github\u3002com", "github.com"],
    ["  stripe.com ", "stripe.com"],
    ["docs.github.com", "docs.github.com"],
    ["bücher.de", "xn--bcher-kva.de"],
    ["surge.sh", "surge.sh"],
    ["bbc.co.uk", "bbc.co.uk"],
    // What is left of these without www. is a public suffix: the site is the domain.
    ["www.gov.uk", "www.gov.uk"],
    ["WWW.Gov.AU", "www.gov.au"],
    ["www.nhs.uk", "www.nhs.uk"],
    ["www.bbc.co.uk", "bbc.co.uk"],
  ])("%s → %s", (input, expected) => {
    expect(normaliseDomain(input)).toEqual({ ok: true, domain: expected });
  });

  it.each([
    "",
    "localhost",
    "127.0.0.1",
    "[::1]",
    "github.com/path",
    "github.com:443",
    "https://github.com",
    "user@github.com",
    "co.uk",
    "com",
    "example.invalidtld",
    "a..com",
    "github.com..",
    "github.com.\u3002",
    "-bad.com",
    `${"a".repeat(64)}.com`,
    `${"a.".repeat(130)}com`,
    "git hub.com",
    "router.home.arpa",
    "1.0.168.192.in-addr.arpa",
    "duckduckgogg42xjoc72x3sjasowoarfbgcmvfimaftt6twagswzczad.onion",
  ])("refuses %j", (input) => {
    expect(normaliseDomain(input).ok).toBe(false);
  });

  it("never throws and only ever returns lower-case ASCII hostnames", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.webUrl(), fc.domain(), fc.string({ unit: "grapheme" })), (input) => {
        const result = normaliseDomain(input);
        if (result.ok) expect(result.domain).toMatch(/^[a-z0-9.-]+$/);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("registrableDomain", () => {
  it("follows the Public Suffix List, private suffixes included", () => {
    expect(registrableDomain("docs.github.com")).toBe("github.com");
    expect(registrableDomain("news.bbc.co.uk")).toBe("bbc.co.uk");
    expect(registrableDomain("someone.github.io")).toBe("someone.github.io");
    expect(registrableDomain("surge.sh")).toBe("surge.sh");
  });
});
