import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cachePurges } from "../../schema";
import { createAccount } from "../../src/accounts/accounts";
import { importCompanyLogo } from "../../src/catalogue/importLogo";
import { logosInIdOrder } from "../../src/catalogue/logos";
import { DISCOVERED_SOURCE_SET } from "../../src/catalogue/provenance";
import { resolveLogo } from "../../src/catalogue/resolveLogo";
import { fileReport, reportsOfAccount } from "../../src/corrections/reports";
import { sha256Hex } from "../../src/lib/encoding";
import { ok } from "../../src/lib/errors";
import type { Platform } from "../../tools/platform";
import { runAdmin } from "../../tools/admin/run";
import { prepareLogo } from "../../tools/importer/prepare";
import { startFakeWebsites } from "../fakes/websites";
import { greyPngBase64, inProcess, platformForThisFile, root, spawnAdmin } from "./helpers";

/**
 * `admin reports resolve ID --action rediscover | forget` (issue 41, "Working the queue";
 * docs/corrections.md): the action is done to the reported domain's discovered logo, the item
 * closes with it, the domain is purged, and the reporter sees the outcome. Rediscovery fetches
 * a fake site on 127.0.0.1 (test/fakes/websites.ts), as `admin discover` does in
 * test/tools/discovery.test.ts.
 */
/** The file's state, and a platform kept open on it for the tests and the in-process commands. */
const file = platformForThisFile();
let websites: Awaited<ReturnType<typeof startFakeWebsites>>;
beforeAll(async () => {
  websites = await startFakeWebsites();
});

const adminProcess = (...args: string[]) => spawnAdmin(file.dir, args, { DISCOVERY_RESOLVE: websites.resolve });
const admin = (...args: string[]) => inProcess((io) => runAdmin([...args, "--persist-to", file.dir], io, file.platform.borrow));
const withFilePlatform = <T>(job: (platform: Platform) => Promise<T>): Promise<T> => job(file.platform);

/** A logo discovery stored for `domain` earlier: the one a reporter says is wrong. */
async function discoveredEarlier(platform: Platform, domain: string) {
  const bytes = new Uint8Array(readFileSync(join(root, "node_modules", "simple-icons", "icons", "gitlab.svg")));
  const prepared = await prepareLogo(bytes);
  if (!prepared.ok) throw new Error(prepared.error);
  const written = await importCompanyLogo(
    platform.db,
    platform.bucket,
    {
      name: domain,
      domains: [domain],
      aliases: [],
      variant: "icon",
      prominence: 1,
      sourceSet: DISCOVERED_SOURCE_SET,
      licence: "unknown",
      sourceHash: await sha256Hex(bytes),
    },
    async () => ok(prepared.logo),
  );
  if (!written.ok) throw new Error(written.error.message);
  return written.value;
}

/** A reporter's account and their report of `domain`'s logo; the queue item's id. */
async function reported(platform: Platform, domain: string, email: string) {
  const account = await createAccount(platform.db, { email, password: "correct horse battery", plan: "free" });
  if (!account.ok) throw new Error(account.error.message);
  const filed = await fileReport(platform.db, {
    domain,
    kind: "outdated",
    message: "They rebranded",
    accountId: account.value.id,
    via: "rest",
  });
  if (!filed.ok) throw new Error(filed.error.message);
  return { accountId: account.value.id, itemId: filed.value.itemId };
}

describe("npm run admin -- reports resolve", () => {
  it("--action rediscover fetches the site again and serves its icon now, and the reporter sees it resolved", async () => {
    const { host } = (await (await fetch(`${websites.controlUrl}/claim`, { method: "POST" })).json()) as { host: string };
    const routes = {
      "/": { type: "text/html", body: '<title>Rebranded</title><link rel="apple-touch-icon" href="/180.png">' },
      "/180.png": { type: "image/png", base64: greyPngBase64(180) },
    };
    await fetch(`${websites.controlUrl}/sites/${host}`, { method: "PUT", body: JSON.stringify({ routes }) });
    const { before, accountId, itemId } = await withFilePlatform(async (platform) => {
      await discoveredEarlier(platform, host);
      const earlier = (await logosInIdOrder(platform.db)).find((logo) => logo.masterKey.startsWith(`logos/${host}/`));
      return { before: earlier!.masterKey, ...(await reported(platform, host, "rediscover@example.com")) };
    });

    const resolved = await adminProcess("reports", "resolve", String(itemId), "--action", "rediscover", "--note", "Fetched again");
    expect(resolved.stderr).toBe("");
    expect(resolved.status).toBe(0);
    expect(resolved.json()).toMatchObject({
      id: itemId,
      status: "resolved",
      action: "rediscover",
      note: "Fetched again",
      done: { domain: host, outcome: "found", chosen: { url: `https://${host}/180.png` } },
    });

    await withFilePlatform(async ({ db }) => {
      // The site's icon now, in place of the one discovered earlier.
      const stored = (await logosInIdOrder(db)).filter((logo) => logo.masterKey.startsWith(`logos/${host}/`));
      expect(stored).toEqual([expect.objectContaining({ sourceSet: "discovered", sourceUrl: `https://${host}/180.png` })]);
      expect(stored[0]!.masterKey).not.toBe(before);
      expect((await resolveLogo(db, { kind: "domain", value: host }))?.masterKey).toBe(stored[0]!.masterKey);
      expect((await db.select().from(cachePurges).all()).map((row) => row.domain)).toContain(host);
      expect(await reportsOfAccount(db, accountId)).toMatchObject([
        { domain: host, status: "resolved", action: "rediscover", note: "Fetched again" },
      ]);
    });
  });

  it("--action forget removes the discovered logo and its objects, and the reporter sees it resolved", async () => {
    const domain = "forgotten-co.com";
    const { logo, accountId, itemId } = await withFilePlatform(async (platform) => {
      const earlier = await discoveredEarlier(platform, domain);
      const logo = (await logosInIdOrder(platform.db)).find((row) => row.id === earlier.logoId);
      return { logo: logo!, ...(await reported(platform, domain, "forget@example.com")) };
    });

    const resolved = await admin("reports", "resolve", String(itemId), "--action", "forget", "--note", "Not their mark");
    expect(resolved.status).toBe(0);
    expect(resolved.json()).toMatchObject({
      id: itemId,
      status: "resolved",
      action: "forget",
      note: "Not their mark",
      done: { domain, logos: 1, companyRemoved: true },
    });

    await withFilePlatform(async ({ db, bucket }) => {
      expect(await resolveLogo(db, { kind: "domain", value: domain })).toBeNull();
      expect(await bucket.head(logo.masterKey)).toBeNull();
      expect((await db.select().from(cachePurges).all()).map((row) => row.domain)).toContain(domain);
      expect(await reportsOfAccount(db, accountId)).toMatchObject([
        { domain, status: "resolved", action: "forget", note: "Not their mark" },
      ]);
    });
    expect((await admin("reports", "list", "--open")).json()).toEqual({ items: [] });
    // Closed: a second resolve is refused.
    expect((await admin("reports", "resolve", String(itemId), "--action", "forget")).status).toBe(1);
  });
});
