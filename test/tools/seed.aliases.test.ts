import { describe, expect, it } from "vitest";
import { type Brand, buildSeedCatalogue, type IconSets } from "../../tools/seed/catalogue";
import type { SimpleIcon } from "../../tools/seed/sets";
import { sourceSets } from "../../src/licences/sources";

/** simple-icons alone, holding the icons given: enough for the catalogue to seed a brand. */
function iconSets(icons: Array<Pick<SimpleIcon, "slug" | "title" | "aliases">>): IconSets {
  const byslug = new Map<string, SimpleIcon>(
    icons.map((icon) => [icon.slug, { ...icon, hex: "000000", svg: '<svg xmlns="http://www.w3.org/2000/svg"/>' }]),
  );
  const source = sourceSets.find((s) => s.id === "simple-icons")!;
  return {
    simpleIcons: byslug,
    all: [
      {
        source,
        field: "simpleIcons",
        has: (slug) => byslug.has(slug),
        logos: (names) =>
          names
            .filter((slug) => byslug.has(slug))
            .map((slug) => ({ variant: "icon" as const, name: slug, svg: byslug.get(slug)!.svg, licence: "CC0-1.0", fullColour: false })),
      },
    ],
  };
}

describe("the seed's aliases from icon sets", () => {
  const sets = iconSets([
    { slug: "deutschetelekom", title: "Deutsche Telekom", aliases: { aka: ["T-Mobile", "Magenta"] } },
    { slug: "tmobile", title: "T-Mobile" },
    { slug: "opentofu", title: "OpenTofu", aliases: { aka: ["OpenTF", "terraform"] } },
    { slug: "terraform", title: "Terraform" },
    { slug: "hermes", title: "Hermès", aliases: { aka: ["HERMES"] } },
  ]);
  const brands: Brand[] = [
    { name: "Deutsche Telekom", domains: ["telekom.com"], aliases: ["Telekom"], simpleIcons: ["deutschetelekom"] },
    { name: "T-Mobile", domains: ["t-mobile.com"], simpleIcons: ["tmobile"] },
    { name: "OpenTofu", domains: ["opentofu.org"], simpleIcons: ["opentofu"] },
    { name: "Terraform", domains: ["terraform.io"], simpleIcons: ["terraform"] },
    { name: "Hermès", domains: ["hermes.com"], simpleIcons: ["hermes"] },
  ];
  const aliasesOf = (name: string) => buildSeedCatalogue(brands, sets).find((c) => c.name === name)!.aliases;

  it("takes no alias that is another brand's name, however it is cased, spaced or punctuated", () => {
    expect(aliasesOf("Deutsche Telekom")).toEqual(["Telekom", "Magenta"]);
    expect(aliasesOf("OpenTofu")).toEqual(["OpenTF"]);
    expect(
      buildSeedCatalogue(
        [
          { ...brands[0]!, name: "Deutsche Telekom" },
          { ...brands[1]!, name: "tmobile" },
        ],
        sets,
      )[0]!.aliases,
    ).toEqual(["Telekom", "Magenta"]);
  });

  it("keeps an alias that no other brand of the mapping is named, and one that spells the brand's own name", () => {
    expect(buildSeedCatalogue([brands[0]!], sets)[0]!.aliases).toEqual(["Telekom", "T-Mobile", "Magenta"]);
    expect(aliasesOf("Hermès")).toEqual(["HERMES"]);
  });
});
