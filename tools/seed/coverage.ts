import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { normaliseDomain, registrableDomain } from "../../src/lib/domain";
import type { SeedCompany } from "./catalogue";

/** The 500 most-linked root domains of the web, as the pinned `top-sites` package ships them. */
export function topSites(): string[] {
  const sites = createRequire(import.meta.url)("top-sites") as Array<{ rank: number; rootDomain: string }>;
  return sites.map((site) => site.rootDomain);
}

/** About a hundred of the best-known consumer brands' own domains (data/seed/consumer-brands.txt). */
export function consumerBrands(): string[] {
  return readFileSync(resolve(import.meta.dirname, "../../data/seed/consumer-brands.txt"), "utf8")
    .split("\n")
    .map((line) => line.replace(/#.*/, "").trim())
    .filter((line) => line !== "");
}

export interface Coverage {
  asked: number;
  answered: number;
  /** Each host asked, with the company that answers it (null: a 404 with discovery off). */
  hosts: Array<{ host: string; company: string | null; why?: string }>;
}

/**
 * How many of a list of hosts the seed companies answer, matched as a lookup matches them with
 * discovery off: the host normalised by the Worker's own normaliseDomain, then the company
 * holding that exact host, else the one holding its registrable domain (findCompanyByDomain in
 * src/catalogue/queries.ts).
 */
export function coverageOf(hosts: readonly string[], companies: readonly SeedCompany[]): Coverage {
  const owner = new Map<string, SeedCompany>();
  for (const company of companies) for (const domain of company.domains) owner.set(domain, company);
  const answers = hosts.map((host) => {
    const normalised = normaliseDomain(host);
    if (!normalised.ok) return { host, company: null, why: `refused by the lookup: ${normalised.reason}` };
    const registrable = registrableDomain(normalised.domain);
    const company = owner.get(normalised.domain) ?? (registrable ? owner.get(registrable) : undefined);
    return { host, company: company?.name ?? null };
  });
  return { asked: hosts.length, answered: answers.filter((a) => a.company !== null).length, hosts: answers };
}
