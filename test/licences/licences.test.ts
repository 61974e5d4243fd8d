import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { licencesReport } from "../../src/licences/licences";
import { sourceSets } from "../../src/licences/sources";
import { darkLogo40x20 } from "../fixtures/images";
import { addCompany } from "../helpers/catalogue";

interface Report {
  sets: Array<{ sourceSet: string; licence: string; attribution: string | null; link: string; logos: number; licences: Record<string, number> }>;
  others: Array<{ sourceSet: string; logos: number; licences: Record<string, number> }>;
  trademarks: string;
}

describe("GET /licences", () => {
  it("names every bundled set's licence and credit, with the live count of logos per set and licence", async () => {
    await addCompany({ name: "Fa One", domains: ["fa-one.example.com"], sourceSet: "fa6-brands", licence: "CC-BY-4.0" }, darkLogo40x20());
    await addCompany({ name: "Fa Two", domains: ["fa-two.example.com"], sourceSet: "fa6-brands", licence: "CC-BY-4.0" }, darkLogo40x20());
    await addCompany({ name: "Si One", domains: ["si-one.example.com"], sourceSet: "simple-icons", licence: "MIT" }, darkLogo40x20());
    await addCompany({ name: "Mine", domains: ["mine.example.com"], sourceSet: "manifest", licence: "unknown" }, darkLogo40x20());

    const response = await exports.default.fetch("https://logos.test/licences");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(response.headers.get("cache-control")).toBe("public, max-age=300");
    const report = (await response.json()) as Report;

    expect(report.sets.map((s) => s.sourceSet)).toEqual(sourceSets.map((s) => s.id));
    const fa = report.sets.find((s) => s.sourceSet === "fa6-brands")!;
    expect(fa).toMatchObject({ licence: "CC-BY-4.0", link: "https://fontawesome.com", logos: 2, licences: { "CC-BY-4.0": 2 } });
    expect(fa.attribution).toContain("Fonticons, Inc.");
    expect(fa.attribution).toContain("https://creativecommons.org/licenses/by/4.0/");
    // simple-icons records a licence per icon; the count says which.
    expect(report.sets.find((s) => s.sourceSet === "simple-icons")).toMatchObject({ licence: "CC0-1.0", attribution: null, logos: 1, licences: { MIT: 1 } });
    expect(report.sets.find((s) => s.sourceSet === "lobe-icons")).toMatchObject({ logos: 0, licences: {} });
    expect(report.others).toEqual([{ sourceSet: "manifest", logos: 1, licences: { unknown: 1 } }]);
    expect(report.trademarks).toMatch(/trademarks of their respective owners/);
  });

  it("asks a credit for every set whose licence is not CC0", () => {
    for (const set of licencesReport([]).sets) expect(set.attribution === null, set.sourceSet).toBe(set.licence === "CC0-1.0");
  });

  it("serves nothing but GET", async () => {
    const response = await exports.default.fetch("https://logos.test/licences", { method: "POST" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });
});
