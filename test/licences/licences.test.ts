import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { licencesReport } from "../../src/licences/licences";
import { sourceSets } from "../../src/licences/sources";
import { darkLogo40x20 } from "../fixtures/images";
import { addCompany } from "../helpers/catalogue";

interface Report {
  sets: Array<{
    sourceSet: string;
    licence: string;
    attribution: string | null;
    link: string;
    logos: number;
    licences: Record<string, number>;
    credits: Array<{ companyName: string; domain: string; licence: string; licenceUrl: string; attribution: string }>;
  }>;
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
    expect(report.sets.find((s) => s.sourceSet === "simple-icons")).toMatchObject({
      licence: "CC0-1.0",
      attribution: null,
      logos: 1,
      licences: { MIT: 1 },
    });
    expect(report.sets.find((s) => s.sourceSet === "lobe-icons")).toMatchObject({ logos: 0, licences: {}, credits: [] });
    expect(report.others).toEqual([{ sourceSet: "manifest", logos: 1, licences: { unknown: 1 } }]);
    expect(report.trademarks).toMatch(/trademarks of their respective owners/);
  });

  it("credits each logo a set serves under a licence of its own, by name, licence and changes", async () => {
    await addCompany(
      { name: "Gnu Project", domains: ["gnu-project.example.org"], sourceSet: "simple-icons", licence: "CC-BY-SA-4.0" },
      darkLogo40x20(),
    );
    await addCompany(
      { name: "Plain Zero", domains: ["plain-zero.example.org"], sourceSet: "simple-icons", licence: "CC0-1.0" },
      darkLogo40x20(),
    );
    await addCompany({ name: "Fa Own", domains: ["fa-own.example.org"], sourceSet: "fa6-brands", licence: "CC-BY-4.0" }, darkLogo40x20());

    const report = (await (await exports.default.fetch("https://logos.test/licences")).json()) as Report;
    const simple = report.sets.find((s) => s.sourceSet === "simple-icons")!;
    expect(simple.credits).toEqual([
      {
        companyName: "Gnu Project",
        domain: "gnu-project.example.org",
        licence: "CC-BY-SA-4.0",
        licenceUrl: "https://spdx.org/licenses/CC-BY-SA-4.0.html",
        attribution: expect.stringMatching(
          /^Gnu Project logo from Simple Icons \(https:\/\/simpleicons\.org\), licensed under CC-BY-SA-4\.0 \(https:\/\/spdx\.org\/licenses\/CC-BY-SA-4\.0\.html\)\. Rendered to PNG/,
        ),
      },
    ]);
    // A logo under its set's own licence is covered by the set's credit.
    expect(report.sets.find((s) => s.sourceSet === "fa6-brands")!.credits).toEqual([]);
  });

  it("asks a credit for every set whose licence is not CC0", () => {
    for (const set of licencesReport([]).sets) expect(set.attribution === null, set.sourceSet).toBe(set.licence === "CC0-1.0");
  });

  it("may be read by any page, its own preflight saying so", async () => {
    const read = await exports.default.fetch("https://logos.test/licences", { headers: { Origin: "https://blog.example" } });
    expect(read.status).toBe(200);
    expect(read.headers.get("access-control-allow-origin")).toBe("*");
    const again = await exports.default.fetch("https://logos.test/licences", { headers: { Origin: "https://blog.example" } });
    expect(again.headers.get("access-control-allow-origin")).toBe("*");
    const preflight = await exports.default.fetch("https://logos.test/licences", {
      method: "OPTIONS",
      headers: {
        Origin: "https://blog.example",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "x-requested-with",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-methods")).toBe("GET");
    expect(preflight.headers.get("access-control-allow-headers")).toBe("x-requested-with");
  });

  it("serves nothing but GET", async () => {
    const response = await exports.default.fetch("https://logos.test/licences", { method: "POST" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });
});
