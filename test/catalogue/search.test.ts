import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { CompanyLogoInput } from "../../src/catalogue/importLogo";
import { DISCOVERED_PROMINENCE, DISCOVERED_SOURCE_SET } from "../../src/catalogue/provenance";
import { findCompanyByName, searchCompanies } from "../../src/catalogue/search";
import { blackPng, preparedFrom } from "../fixtures/images";
import { addCompany, db } from "../helpers/catalogue";

const add = async (name: string, domains: string[], extra: Partial<CompanyLogoInput> = {}) =>
  addCompany({ name, domains, ...extra }, await preparedFrom(blackPng));

const names = async (query: string, limit: number) => (await searchCompanies(db, query, limit)).map((hit) => hit.companyName);

describe("names as people write them, with a legal form", () => {
  it("find the company when the name as written finds nothing", async () => {
    await add("Xylophor", ["xylophor.example"], { prominence: 5 });
    await add("Quillby & Quillby", ["quillby.example"]);
    await add("Brambleton-Cole", ["brambletoncole.example"]);
    expect(await names("Xylophor Inc.", 5)).toEqual(["Xylophor"]);
    expect(await names("xylophor corp", 5)).toEqual(["Xylophor"]);
    expect(await names("Quillby and Quillby", 5)).toEqual(["Quillby & Quillby"]);
    expect(await names("The Brambleton-Cole Company", 5)).toEqual(["Brambleton-Cole"]);
    expect((await findCompanyByName(db, "Xylophor, Inc."))?.companyName).toBe("Xylophor");
    expect((await findCompanyByName(db, "The Brambleton-Cole Company"))?.companyName).toBe("Brambleton-Cole");
    // Only legal forms go: a word the company does not have still finds nothing.
    expect(await names("Xylophor Bakery Inc", 5)).toEqual([]);
    expect(await names("Inc", 5)).toEqual([]);
  });

  it("are read so only where they stand so, and then find only the company of that name", async () => {
    await add("Magazine Zelluna", ["magazinezelluna.example"]);
    await add("Orrisk", ["orrisk.example"]);
    await add("Orrisk Freight", ["orriskfreight.example"], { prominence: 9 });
    // A legal form that begins a name is a word of it.
    expect(await names("Inc Magazine", 5)).toEqual([]);
    expect(await names("Limited Zelluna", 5)).toEqual([]);
    // Without its legal form, the name that is exactly it; not every name it starts.
    expect(await names("Orrisk Ltd", 5)).toEqual(["Orrisk"]);
    expect(await names("Orrisk Logistics Ltd", 5)).toEqual([]);
  });

  it("find a name that keeps its The or and, and a company whose ticker is its name", async () => {
    await add("The Vorlund Depot", ["vorlunddepot.example"]);
    await add("Quorra and Pell", ["quorrapell.example"]);
    await add("Qvx Energy", ["qvx.example"], { ticker: { symbol: "QVX", exchange: "LSE" } });
    expect(await names("The Vorlund Depot, Inc.", 5)).toEqual(["The Vorlund Depot"]);
    expect(await names("Quorra and Pell Ltd", 5)).toEqual(["Quorra and Pell"]);
    expect(await names("Qvx plc", 5)).toEqual(["Qvx Energy"]);
    expect((await findCompanyByName(db, "The Vorlund Depot, Inc."))?.companyName).toBe("The Vorlund Depot");
  });

  it("find a company by an alias written with a legal form, and only by the whole alias", async () => {
    await add("Zentrix Platforms", ["zentrix.example"], { aliases: ["Facetrel", "Orvane Social"] });
    expect(await names("Facetrel Inc", 5)).toEqual(["Zentrix Platforms"]);
    expect(await names("Orvane Social, Ltd.", 5)).toEqual(["Zentrix Platforms"]);
    // An alias the name only starts is no match; nor is a word of it.
    expect(await names("Orvane Inc", 5)).toEqual([]);
    expect(await names("Facetrel Widgets Inc", 5)).toEqual([]);
    // Names that start with the alias rank above it, and do not crowd it out of a short answer.
    for (let n = 1; n <= 6; n++) await add(`Facetrel Works ${n}`, [`facetrelworks${n}.example`], { prominence: 20 });
    expect(await names("Facetrel Inc", 1)).toEqual(["Zentrix Platforms"]);
  });

  it("leave a name that has them as it is", async () => {
    await add("Vantor Company", ["vantorcompany.example"], { prominence: 1 });
    await add("Vantor", ["vantor.example"], { prominence: 9 });
    expect(await names("Vantor Company", 5)).toEqual(["Vantor Company"]);
    expect((await findCompanyByName(db, "Vantor Company"))?.companyName).toBe("Vantor Company");
  });
});

describe("searchCompanies, bounded", () => {
  it("still finds the other matches when the name tiers are full of names whose words do not match", async () => {
    // Their name keys start with "acmezeta", but no word of theirs starts with "zeta".
    for (const n of [1, 2, 3, 4, 5]) await add(`Acmez Eta ${n}`, [`acmezeta${n}.example`], { prominence: 9 });
    await add("Zeta Acme Labs", ["zetaacmelabs.example"]);
    expect(await names("acme zeta", 1)).toEqual(["Zeta Acme Labs"]);
    expect(await names("acme zeta", 5)).toEqual(["Zeta Acme Labs"]);
  });

  it("answers a typed prefix from its names, the best known first, and a short word from its word list", async () => {
    await add("Northwind Traders", ["northwind.example"], { prominence: 2 });
    await add("Northgate Labs", ["northgate.example"], { prominence: 7 });
    await add("Polar North", ["polarnorth.example"], { prominence: 9 });
    await add("Ursa Holdings", ["ursa.example"], { aliases: ["NW Ursa"], prominence: 1 });
    // Names that start with the query first, by prominence; then other words.
    expect(await names("nort", 5)).toEqual(["Northgate Labs", "Northwind Traders", "Polar North"]);
    expect(await names("no", 5)).toEqual(["Northgate Labs", "Northwind Traders", "Polar North"]);
    expect(await names("nw", 5)).toEqual(["Ursa Holdings"]);
    expect(await names("north la", 5)).toEqual(["Northgate Labs"]);
    // Every word must start a word: "ga" starts none of Northgate's.
    expect(await names("north ga", 5)).toEqual([]);
  });

  it("finds a company by the start of any of its domains, ranked with the other matches by prominence", async () => {
    await add("Quokka Foods", ["quokkafoods.com", "qf.io"], { prominence: 1 });
    await add("Quoll Freight", ["quollfreight.co.uk"], { prominence: 4 });
    await add("Wombat Kitchens", ["wombat.example"], { aliases: ["QF Kitchens"], prominence: 2 });
    // "qf" starts an alias's word and a domain: both match, the better known first.
    expect(await names("qf", 5)).toEqual(["Wombat Kitchens", "Quokka Foods"]);
    expect(await names("qf.io", 5)).toEqual(["Quokka Foods"]);
    expect(await names("https://www.quollfreight.co", 5)).toEqual(["Quoll Freight"]);
    expect((await searchCompanies(db, "quollfreight.co.uk", 5))[0]).toMatchObject({ companyName: "Quoll Freight", matchedBy: "domain" });
    // A domain's labels are not words: "uk" and "io" start no name, alias or ticker.
    expect(await names("uk", 5)).toEqual([]);
    expect(await names("io", 5)).toEqual([]);
  });

  it("takes the companies with the whole words typed when there are as many as it reads, before words they only start", async () => {
    // One well-known company whose words only start with "globex" and "consulting", then 500
    // with the whole words (whose names do not start with the query).
    await add("Globexia Consultingworks", ["globexia.example"], { prominence: 9 });
    await env.DB.batch([
      env.DB.prepare(`INSERT INTO companies (name, name_key, aliases, prominence, created_at, updated_at)
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
        SELECT 'Consulting Globex ' || i, 'consultingglobex' || i, '[]', 0, 0, 0 FROM n`),
      env.DB.prepare(`INSERT INTO company_domains (domain, company_id, is_primary)
        SELECT 'consultingglobex' || substr(name_key, 17) || '.example', id, 1 FROM companies WHERE name_key LIKE 'consultingglobex%'`),
    ]);
    const hits = await names("globex consulting", 10);
    expect(hits).toHaveLength(10);
    expect(hits.every((name) => name.startsWith("Consulting Globex "))).toBe(true);
    // Its own words find it; and once fewer companies have the whole words, the words they
    // start count as before.
    expect(await names("globexia consultingworks", 10)).toEqual(["Globexia Consultingworks"]);
    await env.DB.prepare("DELETE FROM companies WHERE name_key LIKE 'consultingglobex%' AND id % 2 = 0").run();
    expect((await names("globex consulting", 10))[0]).toBe("Globexia Consultingworks");
  });
});

describe("searchCompanies, in any script", () => {
  it("finds words of four characters or more in kana, Indic scripts, Hangul and CJK, as it finds their starts", async () => {
    await add("Denso", ["denso.com"], { aliases: ["デンソー"] });
    await add("Nippon Paint", ["nipponpaint.com"], { aliases: ["日本ペイント"] });
    await add("Reliance Industries", ["ril.com"], { aliases: ["रिलायंस इंडस्ट्रीज"] });
    await add("Samsung Electronics", ["samsung.com"], { aliases: ["삼성전자"] });
    for (const [query, name] of [
      ["デンソー", "Denso"],
      ["デン", "Denso"],
      ["ペイント", "Nippon Paint"],
      ["日本ペイント", "Nippon Paint"],
      ["रिलायंस", "Reliance Industries"],
      ["इंडस्ट्रीज", "Reliance Industries"],
      ["रिलायंस इंडस्ट्रीज", "Reliance Industries"],
      ["삼", "Samsung Electronics"],
      ["삼성전자", "Samsung Electronics"],
    ]) {
      expect(await names(query!, 5), query).toEqual([name]);
    }
  });

  it("folds dotless i and letters without a decomposition, in names, words and the lookup by name", async () => {
    await add("Türkiye İş Bankası", ["isbank.com.tr"]);
    await add("YAPI KREDİ", ["yapikredi.com.tr"]);
    await add("Łódź Holdings", ["lodzholdings.example"]);
    await add("Ørsted", ["orsted.com"], { aliases: ["Ørsted Straße"] });
    for (const [query, name] of [
      ["is bankasi", "Türkiye İş Bankası"],
      ["İŞ BANKASI", "Türkiye İş Bankası"],
      ["bankasi", "Türkiye İş Bankası"],
      ["Yapı Kredi", "YAPI KREDİ"],
      ["holdings lodz", "Łódź Holdings"],
      ["orsted", "Ørsted"],
      ["strasse", "Ørsted"],
    ]) {
      expect(await names(query!, 5), query).toEqual([name]);
    }
    expect((await findCompanyByName(db, "Yapı Kredi"))?.companyName).toBe("YAPI KREDİ");
    expect((await findCompanyByName(db, "turkiye is bankasi"))?.companyName).toBe("Türkiye İş Bankası");
  });

  it("answers words of private-use characters, and finds nothing rather than failing when nothing has them", async () => {
    expect(await names("a \uF8FF\uF8FF\uF8FF\uF8FF", 5)).toEqual([]);
    await add("Apple", ["apple.com"], { aliases: ["\uF8FF\uF8FF\uF8FF\uF8FF"] });
    expect(await names("a \uF8FF\uF8FF\uF8FF\uF8FF", 5)).toEqual(["Apple"]);
  });

  it("reads a host pasted without its scheme, or with a port, by its hostname", async () => {
    await add("Acme", ["acme.com"]);
    await add("Stripe", ["stripe.com"]);
    for (const [query, name] of [
      ["www.acme.com/pricing", "Acme"],
      ["acme.com?ref=x", "Acme"],
      ["stripe.com:443", "Stripe"],
      ["https://www.ACME.com:8443/x?y", "Acme"],
    ]) {
      expect((await searchCompanies(db, query!, 5))[0], query).toMatchObject({ companyName: name, matchedBy: "domain" });
    }
    // The start of a domain, pasted with a path, is the start of its host.
    expect(await names("www.stri/x", 5)).toEqual(["Stripe"]);
  });
});

describe("companies discovery made, named after what their sites say", () => {
  const discovered = (name: string, domain: string) =>
    add(name, [domain], { prominence: DISCOVERED_PROMINENCE, sourceSet: DISCOVERED_SOURCE_SET });

  it("rank below every match of the catalogue's, by alias, word or domain, whatever their name", async () => {
    await add("Xanthe", ["xanthe.example"], { aliases: ["Twinkler"], prominence: 50 });
    await add("Blue Twinkler Co", ["bluetwinkler.example"], { prominence: 3 });
    await discovered("Twinkler", "stranger-one.example");
    await discovered("Twinklerverse", "stranger-two.example");
    expect(await names("twinkler", 5)).toEqual(["Xanthe", "Blue Twinkler Co", "Twinkler", "Twinklerverse"]);
    expect(await names("twinkler", 1)).toEqual(["Xanthe"]);
    expect(await names("twink", 1)).toEqual(["Xanthe"]);
    // Found by their own name when the catalogue has nothing of it.
    expect(await names("twinklerverse", 5)).toEqual(["Twinklerverse"]);
  });

  it("come by their exact name before another discovered company with the word, at any limit", async () => {
    await discovered("Best Quorbit Tools", "best-quorbit.example");
    await discovered("Quorbit", "quorbit.example");
    expect(await names("quorbit", 5)).toEqual(["Quorbit", "Best Quorbit Tools"]);
    expect(await names("quorbit", 1)).toEqual(["Quorbit"]);
  });

  it("never take the lookup by name from a company of the catalogue whose alias it is, and keep it otherwise", async () => {
    await add("Xanthe", ["xanthe.example"], { aliases: ["Twinkler"], prominence: 50 });
    // Names that start with it rank above an alias in search: they must not hide the owner.
    for (let n = 0; n < 30; n++) await add(`Twinkler Works ${n}`, [`twinkler-works-${n}.example`], { prominence: 60 });
    await discovered("Twinkler", "stranger-one.example");
    await discovered("Glimmerly", "glimmerly.example");
    expect((await findCompanyByName(db, "Twinkler"))?.domain).toBe("xanthe.example");
    expect((await findCompanyByName(db, "twinkler inc"))?.domain).toBe("xanthe.example");
    expect((await findCompanyByName(db, "Glimmerly"))?.domain).toBe("glimmerly.example");
  });
});

describe("the best match", () => {
  it("is the first of a longer answer, however many the name tiers have room for", async () => {
    // Name keys that start with "nort" whose words do not: they fill the name tiers' places
    // for a limit of 1, and the names that do match are found after all.
    await add("Nor Tab", ["tab-n.example"], { prominence: 10 });
    await add("Nor Tac", ["tac-n.example"], { prominence: 9 });
    await add("Nortel", ["nortel.example"], { prominence: 1 });
    await add("Big Nortex", ["bignortex.example"], { prominence: 5 });
    const five = await names("nort", 5);
    expect(five).toEqual(["Nortel", "Big Nortex"]);
    expect(await names("nort", 1)).toEqual(five.slice(0, 1));
    expect(await names("nort", 2)).toEqual(five);
  });

  it("is the same when the name tiers had room, for a name the prefix list leaves out", async () => {
    // The prefix list of "qz" holds the 64 best known; "Qzar Low" is not among them, and
    // "Other Qzone" matches by a word only.
    for (let n = 0; n < 66; n++) await add(`Q Zed ${n}`, [`q-zed-${n}.example`], { prominence: 100 + n });
    await add("Qzar Low", ["qzar-low.example"], { prominence: 1 });
    await add("Other Qzone", ["other-qzone.example"], { prominence: 1000 });
    const answers = await Promise.all([1, 5, 25].map((limit) => names("qzone", limit)));
    expect(answers.map((answer) => answer[0])).toEqual(["Other Qzone", "Other Qzone", "Other Qzone"]);
    // A name that starts with the query is a name match however it was found: first at every limit.
    const typed = await Promise.all([1, 5, 25].map((limit) => names("qz", limit)));
    expect(typed.map((answer) => answer[0])).toEqual(["Qzar Low", "Qzar Low", "Qzar Low"]);
    expect(typed[1]).toEqual(["Qzar Low", "Other Qzone"]);
  });
});
