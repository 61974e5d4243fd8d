/**
 * npm run coverage -- [--misses]
 *
 * How many hosts of two lists the bundled seed catalogue answers with discovery off (what
 * `npm start` serves before any site is fetched):
 *
 * - the 500 most-linked root domains of the web, as the `top-sites` package (a devDependency,
 *   pinned by the lockfile, its network refresh at install denied in package.json) ships them;
 * - data/seed/consumer-brands.txt, about a hundred of the best-known consumer brands'
 *   own domains, kept by this project.
 *
 * A host counts as answered when a lookup of it would find a seed company: the host normalised
 * by the Worker's normaliseDomain, then matched as findCompanyByDomain matches (exact host,
 * else its registrable domain). Differences from a live lookup, none of which changes a count:
 * the companies are the seed as built (buildSeedCatalogue), not read back from D1 after an
 * import, so a row the importer refused would be counted here; and a host the lookup refuses
 * (one top-sites entry is cut short, `marketingplatform.google....`) counts as not answered,
 * where the Worker answers 400 rather than 404. --misses lists the hosts not answered.
 */
import { buildSeedCatalogue, loadIconSets, readBrands } from "./seed/catalogue";
import { consumerBrands, coverageOf, topSites } from "./seed/coverage";

const companies = buildSeedCatalogue(readBrands(), loadIconSets());
const showMisses = process.argv.includes("--misses");
console.log(`seed catalogue: ${companies.length} companies, ${companies.reduce((n, c) => n + c.logos.length, 0)} logos`);
for (const [label, hosts] of [
  ["top-sites 500", topSites()],
  ["consumer brands", consumerBrands()],
] as const) {
  const { asked, answered, hosts: answers } = coverageOf(hosts, companies);
  console.log(`${label}: ${answered} of ${asked} answered (${Math.round((answered / asked) * 100)} %)`);
  if (showMisses)
    for (const miss of answers.filter((a) => a.company === null)) console.log(`  miss ${miss.host}${miss.why ? ` (${miss.why})` : ""}`);
}
