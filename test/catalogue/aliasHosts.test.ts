/// <reference types="vite/client" />
import { exports } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { emptySite } from "../discovery/helpers";
import { darkLogo40x20 } from "../fixtures/images";
import { addCompany } from "../helpers/catalogue";
import { assetKeyOf, BASE, fetchWith, freshKey } from "../lookup/helpers";

// The curated mapping itself, as the seed reads it: a brand's other hosts are whatever it lists.
const files = import.meta.glob("../../data/seed/brands/*.jsonl", { query: "?raw", import: "default", eager: true }) as Record<
  string,
  string
>;
const brands = Object.values(files).flatMap((text) =>
  text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as { name: string; domains: string[] }),
);
const brandOwning = (host: string) => {
  const brand = brands.find((b) => b.domains.includes(host));
  if (!brand) throw new Error(`no brand in the mapping owns ${host}`);
  return brand;
};

const get = (path: string) => exports.default.fetch(`${BASE}${path}`, { redirect: "manual" });
let token: string;

// Storage starts empty for every test (test/helpers/setup.ts).
beforeEach(async () => {
  // Each brand written as the seed writes it: one company with all its mapped hosts.
  for (const primary of [
    "google.com",
    "youtube.com",
    "music.youtube.com",
    "whatsapp.com",
    "telegram.org",
    "discord.com",
    "reddit.com",
    "amazon.com",
    "forms.gle",
    "bbc.co.uk",
    "aws.amazon.com",
    "wordpress.com",
    "blogger.com",
  ]) {
    const brand = brandOwning(primary);
    await addCompany({ name: brand.name, domains: brand.domains }, darkLogo40x20());
  }
  token = await freshKey();
});

describe("lookups through a brand's other hosts", () => {
  it("answers each alias host with the logo of the brand's primary host", async () => {
    for (const [asked, primary] of [
      ["google.de", "google.com"],
      ["www.google.co.uk", "google.com"],
      ["google.com.br", "google.com"],
      ["goo.gl", "google.com"],
      ["lh3.googleusercontent.com", "google.com"],
      ["youtu.be", "youtube.com"],
      ["i.ytimg.com", "youtube.com"],
      ["wa.me", "whatsapp.com"],
      ["t.me", "telegram.org"],
      ["discord.gg", "discord.com"],
      ["cdn.discordapp.com", "discord.com"],
      ["redd.it", "reddit.com"],
      ["i.redd.it", "reddit.com"],
      ["amzn.to", "amazon.com"],
      ["amazon.co.jp", "amazon.com"],
      ["m.media-amazon.com", "amazon.com"],
      ["www.bbc.com", "bbc.co.uk"],
      ["s3.amazonaws.com", "aws.amazon.com"],
      ["files.wordpress.com", "wordpress.com"],
      // Under blogspot.com, a private suffix: Blogger's own image host, held as such.
      ["1.bp.blogspot.com", "blogger.com"],
    ] as const) {
      const response = await get(`/${asked}?token=${token}`);
      expect(response.status, asked).toBe(302);
      expect(assetKeyOf(response.headers.get("location")!), asked).toMatch(
        new RegExp(`^logos/${primary.replaceAll(".", "\\.")}/icon\\.test\\.`),
      );
    }
  });

  it("keeps a host that serves another product with that product's company", async () => {
    for (const [asked, primary] of [
      ["forms.gle", "forms.gle"],
      ["music.youtube.com", "music.youtube.com"],
    ] as const) {
      const response = await get(`/${asked}?token=${token}`);
      expect(assetKeyOf(response.headers.get("location")!), asked).toMatch(new RegExp(`^logos/${primary.replaceAll(".", "\\.")}/`));
    }
  });

  it("misses a look-alike host the brand does not own", async () => {
    // Same label under another registrable domain (one nobody knows): no fallback to the brand.
    expect((await get(`/youtu.be.${await emptySite()}?token=${token}`)).status).toBe(404);
    // A user's blog under blogspot.com, a private suffix, is no host of Blogger's (and, the
    // catalogue alone asked, not looked for on the internet).
    expect((await fetchWith({ DISCOVERY: "off" }, `${BASE}/someone.blogspot.com?token=${token}`)).status).toBe(404);
  });
});
