import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { addTakedown } from "../../src/corrections/takedowns";
import { forgetJournalPosition, purgeDomains, readPurgeJournal } from "../../src/purge/purge";
import { FAKE_CDN_PURGE_TOKEN, FAKE_CDN_ZONE_ID, type ReceivedPurge } from "../fakes/cdnPurgeApi";
import { db } from "../helpers/catalogue";
import { BASE, freshCompany, freshKey } from "../lookup/helpers";

/**
 * The CDN's copies purged through Cloudflare's API (issue 41, "Purge"; docs/corrections.md#purge),
 * against a stand-in of the purge_cache endpoint on 127.0.0.1 (test/fakes/cdnPurgeApi.ts). A
 * deployment with a zone is the test env with CDN_PURGE_ZONE_ID and the token set; the
 * operator's takedown writes the purge journal as the CLI does, and the Worker's isolate,
 * reading it, purges the CDN.
 */
const control = env.CDN_PURGE_FAKE_CONTROL;
const received = async () => (await (await fetch(`${control}/control/requests`)).json()) as ReceivedPurge[];
const withZone = (vars: Partial<Env> = {}): Env =>
  ({ ...env, CDN_PURGE_ZONE_ID: FAKE_CDN_ZONE_ID, CDN_PURGE_API_TOKEN: FAKE_CDN_PURGE_TOKEN, ...vars }) as Env;
const get = (path: string) => exports.default.fetch(`${BASE}${path}`, { redirect: "manual" });

/** What the Worker logged at error level while `work` ran. */
async function errorsLoggedBy(work: () => Promise<unknown>): Promise<string[]> {
  const logged: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => logged.push(args.map(String).join(" "));
  try {
    await work();
  } finally {
    console.error = original;
  }
  return logged;
}

beforeEach(async () => {
  await fetch(`${control}/control/requests`, { method: "DELETE" });
});
afterEach(() => forgetJournalPosition());

describe("the CDN purge, on a deployment with a zone", () => {
  it("a takedown sends one purge of the zone by the domain's cache tag, with the zone's token", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    expect((await addTakedown(db, domain, "Trademark owner's request")).ok).toBe(true);

    await readPurgeJournal(withZone());

    expect(await received()).toEqual([
      { zone: FAKE_CDN_ZONE_ID, authorization: `Bearer ${FAKE_CDN_PURGE_TOKEN}`, body: { tags: [`logo-domain:${domain}`] } },
    ]);
    expect((await get(`/${domain}?token=${token}`)).status).toBe(451);
    // The purge is done once: reading the journal again sends nothing more.
    await readPurgeJournal(withZone());
    expect(await received()).toHaveLength(1);
  });

  it("with CDN_URL, purges the CDN's copies of the domain's objects by prefix too", async () => {
    await purgeDomains(withZone({ CDN_URL: "https://cdn.logos.test" }), ["acme.com"]);

    expect((await received()).map((request) => request.body)).toEqual([
      { tags: ["logo-domain:acme.com"] },
      { prefixes: ["cdn.logos.test/logos/acme.com/"] },
    ]);
  });

  it("a refusing API is logged, the takedown holds, and the next isolate tries the purge again", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    await fetch(`${control}/control/refuse`, { method: "PUT" });
    expect((await addTakedown(db, domain, "Court order")).ok).toBe(true);

    const logged = await errorsLoggedBy(() => readPurgeJournal(withZone()));

    expect(await received()).toHaveLength(1);
    expect(logged.join("\n")).toContain("purge.cdn_refused");
    expect(logged.join("\n")).toContain("Authentication error");
    expect((await get(`/${domain}?token=${token}`)).status).toBe(451);

    // The API answers again; an isolate that has not read the journal yet purges what failed.
    await fetch(`${control}/control/requests`, { method: "DELETE" });
    forgetJournalPosition();
    await readPurgeJournal(withZone());
    expect(await received()).toEqual([expect.objectContaining({ body: { tags: [`logo-domain:${domain}`] } })]);
  });
});

describe("the CDN purge, without a zone", () => {
  it("sends nothing, with no zone or with a zone but no token, and the takedown still holds", async () => {
    const { domain } = await freshCompany();
    const token = await freshKey();
    expect((await addTakedown(db, domain, "Trademark owner's request")).ok).toBe(true);

    await readPurgeJournal(env);
    forgetJournalPosition();
    await readPurgeJournal(withZone({ CDN_PURGE_API_TOKEN: undefined }));
    await purgeDomains(env, [domain]);

    expect(await received()).toEqual([]);
    expect((await get(`/${domain}?token=${token}`)).status).toBe(451);
  });
});
