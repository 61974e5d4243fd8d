import { and, asc, eq, isNull, lt, ne, or } from "drizzle-orm";
import { type BrandClaim, brandClaims, type VerificationMethod } from "../../schema";
import { changeStatement } from "../catalogue/changes";
import { readVars } from "../env";
import { parseResolve } from "../discovery/fetcher";
import type { CatalogueDb } from "../lib/db";
import { normaliseDomain, registrableDomain } from "../lib/domain";
import { randomBase62 } from "../lib/encoding";
import { fail, ok, type Result } from "../lib/errors";
import { log } from "../lib/log";
import { DAY_MS, HOUR_MS } from "../lib/time";
import { removeOwnerBrand } from "./brand";
import { txtRecords } from "./dns";
import { fetchOwnershipFile } from "./wellKnown";

/**
 * Owner-verified brands (docs/corrections.md, "Claiming your brand"): an account claims a
 * registrable domain and is given a token; it proves control by publishing the token in a TXT
 * record at `_logo-lookup.<domain>` or in the file `https://<domain>/.well-known/logo-lookup.txt`.
 * A verified owner's logo, name and colour are served to everyone (./brand.ts). The proof is
 * looked for again every CLAIM_RECHECK_MS (the scheduled run, ./scheduled.ts); a claim whose
 * proof is gone lapses, and its brand with it. One verified owner per domain at a time.
 */
export const CLAIM_RECHECK_MS = DAY_MS;
/** A re-check that could not tell (the resolver and the site both unreachable) is tried again this much later. */
const UNDECIDED_RETRY_MS = HOUR_MS;
export const DNS_RECORD_PREFIX = "_logo-lookup.";
const TOKEN_PREFIX = "logo-lookup-verification=";
/** Claims an account may hold, pending or verified. */
export const MAX_CLAIMS_PER_ACCOUNT = 50;

/** The domain a claim is made for: the registrable domain of what was typed (`shop.acme.com` → `acme.com`). */
export function claimDomain(input: string): Result<string> {
  const host = normaliseDomain(input);
  if (!host.ok) return fail("invalid_argument", "Invalid domain format");
  return ok(registrableDomain(host.domain) ?? host.domain);
}

export async function claimsOf(db: CatalogueDb, accountId: string): Promise<BrandClaim[]> {
  return db.select().from(brandClaims).where(eq(brandClaims.accountId, accountId)).orderBy(asc(brandClaims.domain)).all();
}

export async function claimOf(db: CatalogueDb, accountId: string, domain: string): Promise<BrandClaim | undefined> {
  return db
    .select()
    .from(brandClaims)
    .where(and(eq(brandClaims.accountId, accountId), eq(brandClaims.domain, domain)))
    .get();
}

/** The account's claim to the domain: an existing one as it is (a lapsed one pending again), else a new one with a fresh token. */
export async function startClaim(db: CatalogueDb, accountId: string, input: string, now = Date.now()): Promise<Result<BrandClaim>> {
  const domain = claimDomain(input);
  if (!domain.ok) return domain;
  const existing = await claimOf(db, accountId, domain.value);
  if (existing) {
    if (existing.status !== "lapsed") return ok(existing);
    const [again] = await db.update(brandClaims).set({ status: "pending" }).where(eq(brandClaims.id, existing.id)).returning();
    return ok(again!);
  }
  const held = await db.select({ id: brandClaims.id }).from(brandClaims).where(eq(brandClaims.accountId, accountId)).all();
  if (held.length >= MAX_CLAIMS_PER_ACCOUNT) return fail("conflict", `An account may claim at most ${MAX_CLAIMS_PER_ACCOUNT} domains`);
  const [claim] = await db
    .insert(brandClaims)
    .values({ domain: domain.value, accountId, token: `${TOKEN_PREFIX}${randomBase62(32)}`, createdAt: new Date(now) })
    .returning();
  return ok(claim!);
}

/** What proves a claim, where it was looked for. `undecided`: neither place could be asked, so nothing is concluded. */
export type Proof = { found: VerificationMethod } | { found: null; undecided: boolean; detail: string };

export async function lookForProof(env: Env, domain: string, token: string): Promise<Proof> {
  const vars = readVars(env);
  const dns = await txtRecords(vars.DNS_RESOLVER_URL, `${DNS_RECORD_PREFIX}${domain}`);
  if (dns.ok && dns.records.some((record) => record.trim() === token)) return { found: "dns" };
  const file = await fetchOwnershipFile(domain, parseResolve(vars.DISCOVERY_RESOLVE, vars.PUBLIC_BASE_URL));
  if (file.ok && file.body.split(/\r?\n/).some((line) => line.trim() === token)) return { found: "well_known" };
  const fileSays = file.ok ? "the file does not hold the token" : file.reason;
  const dnsSays = dns.ok ? (dns.records.length === 0 ? "no TXT record" : "no TXT record with the token") : dns.reason;
  // Gone only when both places answered without it: a resolver or site that did not answer proves nothing.
  return { found: null, undecided: !dns.ok || !(file.ok || file.definitive), detail: `DNS: ${dnsSays}; file: ${fileSays}` };
}

/** Checks the account's claim now; verified, it is the domain's owner from this moment. */
export async function verifyClaim(
  env: Env,
  db: CatalogueDb,
  accountId: string,
  input: string,
  now = Date.now(),
): Promise<Result<BrandClaim>> {
  const domain = claimDomain(input);
  if (!domain.ok) return domain;
  const claim = await claimOf(db, accountId, domain.value);
  if (!claim) return fail("not_found", `No claim to ${domain.value}: start one first`);
  if (claim.status === "verified") return ok(claim);
  const other = await db
    .select({ id: brandClaims.id })
    .from(brandClaims)
    .where(and(eq(brandClaims.domain, claim.domain), eq(brandClaims.status, "verified"), ne(brandClaims.id, claim.id)))
    .get();
  if (other) return fail("conflict", `${claim.domain} is verified by another account; its claim lapses when its proof is gone`);
  const proof = await lookForProof(env, claim.domain, claim.token);
  const at = new Date(now);
  if (!proof.found) {
    await db.update(brandClaims).set({ checkedAt: at }).where(eq(brandClaims.id, claim.id));
    return fail(
      "not_found",
      `No proof found for ${claim.domain} (${proof.detail}). Publish the token as a TXT record at ${DNS_RECORD_PREFIX}${claim.domain}, or in https://${claim.domain}/.well-known/logo-lookup.txt, then try again`,
    );
  }
  const [verified] = await db.batch([
    db
      .update(brandClaims)
      .set({ status: "verified", method: proof.found, verifiedAt: at, checkedAt: at })
      .where(eq(brandClaims.id, claim.id))
      .returning(),
    changeStatement(db, [{ domain: claim.domain, change: "verified", detail: null, method: proof.found }], at),
  ]);
  return ok(verified[0]!);
}

/** The account's verified claim to a domain, or why it has none: what every owner's edit starts from. */
export async function verifiedClaim(db: CatalogueDb, accountId: string, input: string): Promise<Result<BrandClaim>> {
  const domain = claimDomain(input);
  if (!domain.ok) return domain;
  const claim = await claimOf(db, accountId, domain.value);
  if (claim?.status !== "verified") return fail("forbidden", `Verify your claim to ${domain.value} first`);
  return ok(claim);
}

/** Verified claims looked at again per scheduled run: each is a DNS query and perhaps a fetch. */
export const CLAIMS_PER_RUN = 20;

export interface RecheckSummary {
  checked: number;
  kept: number;
  lapsed: number;
  undecided: number;
}

/** The verified claims last checked CLAIM_RECHECK_MS ago or more, oldest first, CLAIMS_PER_RUN at most: proof found keeps them, proof gone lapses them. */
export async function recheckClaims(env: Env, db: CatalogueDb, now = Date.now()): Promise<RecheckSummary> {
  const due = await db
    .select()
    .from(brandClaims)
    .where(
      and(
        eq(brandClaims.status, "verified"),
        or(isNull(brandClaims.checkedAt), lt(brandClaims.checkedAt, new Date(now - CLAIM_RECHECK_MS)), isNull(brandClaims.accountId)),
      ),
    )
    .orderBy(asc(brandClaims.checkedAt))
    .limit(CLAIMS_PER_RUN)
    .all();
  const summary: RecheckSummary = { checked: due.length, kept: 0, lapsed: 0, undecided: 0 };
  for (const claim of due) {
    try {
      // A claim whose account is gone has no owner to speak for the brand.
      const proof: Proof =
        claim.accountId === null
          ? { found: null, undecided: false, detail: "the account was deleted" }
          : await lookForProof(env, claim.domain, claim.token);
      if (proof.found) {
        await db
          .update(brandClaims)
          .set({ checkedAt: new Date(now), method: proof.found })
          .where(eq(brandClaims.id, claim.id));
        summary.kept++;
      } else if (proof.undecided) {
        await db
          .update(brandClaims)
          .set({ checkedAt: new Date(now - CLAIM_RECHECK_MS + UNDECIDED_RETRY_MS) })
          .where(eq(brandClaims.id, claim.id));
        summary.undecided++;
      } else {
        await lapseClaim(env, db, claim, proof.detail, now);
        summary.lapsed++;
      }
    } catch (error) {
      log.error("ownership.recheck_failed", { domain: claim.domain, error });
    }
  }
  return summary;
}

/** The claim lapsed: its brand undone (./brand.ts), the lapse in the change log, the domain purged. */
export async function lapseClaim(env: Env, db: CatalogueDb, claim: BrandClaim, why: string, now = Date.now()): Promise<void> {
  const at = new Date(now);
  await removeOwnerBrand(
    env,
    db,
    claim,
    [
      db.update(brandClaims).set({ status: "lapsed", lapsedAt: at, checkedAt: at }).where(eq(brandClaims.id, claim.id)),
      changeStatement(db, [{ domain: claim.domain, change: "lapsed", detail: why.slice(0, 200), method: claim.method ?? "dns" }], at),
    ],
    at,
  );
  log.info("ownership.lapsed", { domain: claim.domain, why });
}
