/**
 * A synthetic catalogue for the scale benchmark (test/bench/scale.ts): as many companies as
 * asked, with their logo rows, the same ones for the same seed.
 *
 * Names combine word lists the way real registries look: a brand stem ("Acme", "Northwind",
 * or an invented one like "Zentora"), usually an industry ("Logistics", "Labs") and sometimes
 * a legal suffix. Stems are drawn with a heavy head, so a few are shared by tens of thousands
 * of companies ("Acme Logistics", "Acme Labs", "Acme Foods Inc"…) and prefix searches meet
 * the crowded index ranges a real catalogue has. Every company has one primary domain; some
 * have a second one, aliases, or (about 5 %) a ticker; prominence runs 0–10, mostly low.
 *
 * Logos follow the seed catalogue's shape (1.17 a company: every company an icon, one in six a
 * wordmark too), with its formats, tones, source sets and licences; their rows hold no R2 keys
 * (readers derive them, src/images/objectKeys.ts), and no image bytes exist. They are drawn from a
 * stream of their own, so the companies of a seed are the same with or without them.
 */
import type { LogoTone, LogoVariant, logos } from "../../schema";
import { nameKey } from "../../src/catalogue/names";
import { RENDITIONS_VERSION } from "../../src/images/renditions";

export interface SyntheticCompany {
  id: number;
  name: string;
  nameKey: string;
  aliases: string[];
  prominence: number;
  /** Primary first. */
  domains: string[];
  ticker?: { symbol: string; exchange: string };
  logos: SyntheticLogo[];
}

/** A row of `logos` as the import writes it, without its id, company and times. */
export type SyntheticLogo = Required<Omit<typeof logos.$inferInsert, "id" | "companyId" | "createdAt" | "updatedAt">>;

/** sfc32: small, fast, and the same sequence on every platform for a given seed. */
export function seededRandom(seed: number): () => number {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed >>> 0;
  const next = () => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 15; i++) next();
  return next;
}

// Real-word stems first: the skewed draw below makes the head of this list the crowded part.
const wordStems = `Global First American National United Acme Northwind Summit Pioneer Apex Atlas Horizon
Evergreen Pacific Atlantic Liberty Premier Royal Central Western Eastern Northern Southern Metro Capital
Bright Blue Green Silver Golden Granite Harbor Meridian Nova Orion Quantum Vertex Zenith Falcon Eagle
Phoenix Crescent Sterling Beacon Cascade Everest Frontier Keystone Lighthouse Maple Oak Pine Cedar River
Lake Stone Iron Copper Crystal Diamond Emerald Sapphire Ruby Coral Aurora Polaris Titan Vanguard Sentinel
Paragon Pinnacle Prime Crown Empire Union Urban City Bay Valley Mountain Coastal Prairie Desert Arctic
Solar Lunar Stellar Cosmic Clear Swift Rapid Smart Red Black White Alpha Beta Delta Gamma Sigma Omega
Nimbus Zephyr Boreal Tundra Willow Aspen Birch Hawthorn Juniper Magnolia Sequoia Acorn Anchor Arrow
Compass Harvest Heritage Legacy Monarch Noble Patriot Pilgrim Quest Ranger Regal Sovereign Spark
Tidewater Trident Triumph Velocity Victory Vista Wave North South East West Northstar Northgate Nordic
Noble Norman Nomad Novus Apollo Ares Argo Astra Axis Aegis Alder Amber Ash`
  .split(/\s+/)
  .filter((word, index, all) => all.indexOf(word) === index);

const onsets = "Ze No Va Lu Ka Ti Xe Qu Bri Flo Gra Mo Sa Te Ro Vi Ja Pe Cor Dra El Om Ax Fi Ha Ly Mi Ne Pa Su Ar Be Ca Di Gu".split(" ");
const middles = ["", "la", "ri", "no", "ta", "ve"];
const codas = "tora vix nix ly ra mo zen vo ria tex lia dex gen via ro sys tiq bee ify zo".split(" ");
const inventedStems = onsets.flatMap((onset) => middles.flatMap((middle) => codas.map((coda) => `${onset}${middle}${coda}`)));
const stems = [...wordStems, ...inventedStems];

const industries = `Logistics Labs Foods Systems Software Capital Partners Health Energy Motors Media Bank Insurance
Pharma Robotics Analytics Studios Group Holdings Technologies Networks Solutions Retail Apparel Airlines
Brewing Coffee Bakery Dental Clinic Realty Properties Construction Engineering Consulting Ventures Security
Cloud Data AI Bio Therapeutics Devices Materials Chemicals Mining Metals Steel Paper Packaging Shipping
Freight Transport Rail Marine Travel Hotels Resorts Games Entertainment Music Publishing News Education
Academy Learning Fitness Sports Outdoor Fashion Beauty Cosmetics Home Furniture Electric Power Water
Utilities Telecom Wireless Mobile Digital Interactive Design Marketing Advertising Finance Credit Lending
Payments Pay Exchange Trading Investments Legal Staffing Recruiting Farms Organics Pet Veterinary Auto
Parts Tools Supply Industries Manufacturing Aerospace Defense Semiconductors Instruments Optics`.split(/\s+/);

const suffixes = ["Inc", "Ltd", "LLC", "GmbH", "Co", "Corp", "PLC", "SA", "AG", "& Co"];
const tlds = ["com", "com", "com", "com", "com", "com", "io", "co", "net", "ai", "de", "co.uk", "fr", "app"];
const exchanges = ["NYSE", "NASDAQ", "LSE", "XETRA", "TSX", "ASX"];

/** The seed catalogue's sets, by their share of its logos. */
const sourceSetShares: [string, number][] = [
  ["simple-icons", 0.49],
  ["iconify-logos", 0.32],
  ["web3icons", 0.095],
  ["lobe-icons", 0.063],
  ["devicon", 0.011],
  ["fa6-brands", 0.008],
  ["coreui-brands", 0.004],
  ["streamline-logos", 0.003],
  ["cryptocurrency-icons", 0.002],
  ["boxicons-brands", 0.004],
];
const licenceShares: [string, number][] = [
  ["CC0-1.0", 0.8],
  ["MIT", 0.17],
  ["CC-BY-4.0", 0.015],
  ["Apache-2.0", 0.008],
  ["CC-BY-SA-4.0", 0.007],
];
const toneShares: [LogoTone, number][] = [
  ["mixed", 0.5],
  ["dark", 0.3],
  ["light", 0.1],
  ["opaque", 0.1],
];

function drawShare<T>(random: () => number, shares: [T, number][]): T {
  let r = random() * shares.reduce((sum, [, share]) => sum + share, 0);
  for (const [value, share] of shares) {
    r -= share;
    if (r < 0) return value;
  }
  return shares.at(-1)![0];
}

const hex = (random: () => number, digits: number) =>
  Array.from({ length: digits / 8 }, () =>
    Math.floor(random() * 2 ** 32)
      .toString(16)
      .padStart(8, "0"),
  ).join("");

/** One company's logos: an icon, and for one in six a wordmark. */
function syntheticLogos(random: () => number): SyntheticLogo[] {
  const variants: LogoVariant[] = random() < 0.175 ? ["icon", "full"] : ["icon"];
  return variants.map((variant) => {
    const sourceSet = drawShare(random, sourceSetShares);
    const format = random() < 0.8 ? "svg" : "png";
    const contentHash = hex(random, 64);
    const tone = drawShare(random, toneShares);
    // SVGs are rasterised 1,200 px wide; rasters keep their size.
    const width = format === "svg" ? 1200 : 64 + Math.floor(random() * 449);
    const aspect = variant === "icon" ? 0.8 + random() * 0.2 : 0.15 + random() * 0.4;
    return {
      variant,
      format,
      // As the import decides them from pixels (src/images/renditions.ts): ink that vanishes on
      // a page of its own tone gets a rendition for that page; white ink is lightened by default.
      renditions: {
        version: RENDITIONS_VERSION,
        light: tone === "light",
        dark: tone === "dark",
        plain: tone === "light" ? "light" : "master",
        vector: format === "svg",
      },
      width,
      height: Math.max(1, Math.round(width * aspect)),
      bytes: 2_000 + Math.floor(random() ** 2 * 60_000),
      sourceHash: hex(random, 64),
      contentHash,
      tone,
      sourceSet,
      licence: drawShare(random, licenceShares),
      // Imported, not discovered: no fetch provenance.
      sourceUrl: null,
      fetchedAt: null,
      sourceEtag: null,
      sourceLastModified: null,
      verifiedAt: null,
    };
  });
}

/** Generates `count` companies with ids 1…count, in id order, for `seed`. */
export function* syntheticCompanies(count: number, seed: number): Generator<SyntheticCompany> {
  const random = seededRandom(seed);
  const logoRandom = seededRandom(seed ^ 0x5bd1e995);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  // A heavy head: the first stem is drawn ~4 % of the time, the first 200 together ~30 %.
  const stem = () => stems[Math.floor(stems.length * random() ** 2.5)]!;
  const industry = () => industries[Math.floor(industries.length * random() ** 1.5)]!;
  const domains = new Set<string>();
  const tickers = new Set<string>();

  const freeDomain = (label: string) => {
    const tld = pick(tlds);
    for (let attempt = 0; ; attempt++) {
      const candidate = attempt === 0 ? `${label}.${tld}` : attempt < 4 ? `${label}.${pick(tlds)}` : `${label}${attempt}.${tld}`;
      if (!domains.has(candidate)) {
        domains.add(candidate);
        return candidate;
      }
    }
  };

  for (let id = 1; id <= count; id++) {
    const shape = random();
    const words =
      shape < 0.45
        ? [stem(), industry()]
        : shape < 0.65
          ? [stem(), industry(), pick(suffixes)]
          : shape < 0.75
            ? [stem()]
            : shape < 0.85
              ? [stem(), stem()]
              : [stem(), stem(), industry()];
    const name = words.join(" ");
    // The domain is the name without its legal suffix, as companies register them.
    const bare = suffixes.includes(words.at(-1)!) ? words.slice(0, -1) : words;
    const label = nameKey(bare.join(""));
    const companyDomains = [freeDomain(label)];
    if (random() < 0.1) companyDomains.push(freeDomain(label));

    const aliases: string[] = [];
    const aliasShape = random();
    if (aliasShape < 0.06 && bare.length > 1)
      aliases.push(
        bare
          .map((word) => word[0])
          .join("")
          .toUpperCase(),
      );
    else if (aliasShape < 0.11) aliases.push(bare[0]!);
    else if (aliasShape < 0.15) aliases.push(`${stem()} ${industry()}`); // a former name

    let ticker: SyntheticCompany["ticker"];
    if (random() < 0.05) {
      const letters = label.replace(/[^a-z]/g, "").toUpperCase();
      for (let attempt = 0; attempt < 20 && !ticker; attempt++) {
        const length = 2 + Math.floor(random() * 3);
        const symbol =
          attempt < 3
            ? letters.slice(0, length)
            : Array.from({ length }, () => String.fromCharCode(65 + Math.floor(random() * 26))).join("");
        const exchange = pick(exchanges);
        if (symbol.length >= 2 && !tickers.has(`${symbol}:${exchange}`)) {
          tickers.add(`${symbol}:${exchange}`);
          ticker = { symbol, exchange };
        }
      }
    }

    yield {
      id,
      name,
      nameKey: nameKey(name),
      aliases,
      prominence: Math.min(10, Math.floor(11 * random() ** 3)),
      domains: companyDomains,
      ...(ticker ? { ticker } : {}),
      logos: syntheticLogos(logoRandom),
    };
  }
}
