import { beforeAll, describe, expect, it } from "vitest";
import { apiKeys } from "../../schema";
import { logosInIdOrder } from "../../src/catalogue/logos";
import { createAccount } from "../../src/accounts/accounts";
import { createKey } from "../../src/keys/apiKeys";
import { startFakeWebsites } from "../fakes/websites";
import { runAdmin } from "../../tools/admin/run";
import { domainName } from "../../src/catalogue/names";
import type { Platform } from "../../tools/platform";
import { greyPngBase64, inProcess, platformForThisFile, spawnAdmin } from "./helpers";

/** The file's state, and a platform kept open on it for the test and the in-process commands. */
const file = platformForThisFile();
let control: string;
beforeAll(async () => {
  const websites = await startFakeWebsites();
  control = websites.controlUrl;
  // The tool worker reads DISCOVERY_RESOLVE from the environment the admin command runs in.
  process.env.DISCOVERY_RESOLVE = websites.resolve;
});

const adminProcess = (...args: string[]) => spawnAdmin(file.dir, args);
/** The same command in this process, on the file's platform: the program itself runs once, for discover. */
const admin = (...args: string[]) => inProcess((io) => runAdmin([...args, "--persist-to", file.dir], io, file.platform.borrow));
const withFilePlatform = <T>(job: (platform: Platform) => Promise<T>): Promise<T> => job(file.platform);

describe("npm run admin: discovery", () => {
  it("discover prints what it chose and why, logo forget removes it and its objects, key fallback sets a key's default", async () => {
    const { host } = (await (await fetch(`${control}/claim`, { method: "POST" })).json()) as { host: string };
    const routes = {
      "/": {
        type: "text/html",
        body: '<title>Ops Test</title><link rel="icon" sizes="16x16" href="/16.png"><link rel="apple-touch-icon" href="/180.png">',
      },
      "/16.png": { type: "image/png", base64: greyPngBase64(16) },
      "/180.png": { type: "image/png", base64: greyPngBase64(180) },
    };
    await fetch(`${control}/sites/${host}`, { method: "PUT", body: JSON.stringify({ routes }) });

    const discovered = await adminProcess("discover", `--domain=WWW.${host.toUpperCase()}`);
    expect(discovered.stderr).toBe("");
    expect(discovered.status).toBe(0);
    const report = discovered.json();
    expect(report).toMatchObject({
      domain: host,
      outcome: "found",
      // The title does not agree with the domain: the company is named after its domain.
      name: domainName(host),
      chosen: { url: `https://${host}/180.png`, width: 180, written: "created" },
    });
    expect(report.candidates).toEqual([
      expect.objectContaining({ url: `https://${host}/180.png`, from: "apple-touch-icon", width: 180, score: 180 }),
      expect.objectContaining({ url: `https://${host}/16.png`, from: "link icon", width: 16, score: expect.any(Number) }),
    ]);
    const [stored] = await withFilePlatform(({ db }) => logosInIdOrder(db));
    expect(stored).toMatchObject({ sourceSet: "discovered", sourceUrl: `https://${host}/180.png` });

    const forgotten = await admin("logo", "forget", "--domain", host);
    expect(forgotten.status).toBe(0);
    expect(forgotten.json()).toEqual({ domain: host, logos: 1, companyRemoved: true, missForgotten: false });
    await withFilePlatform(async ({ db, bucket }) => {
      expect(await logosInIdOrder(db)).toEqual([]);
      expect(await bucket.head(stored!.masterKey)).toBeNull();
      expect(await bucket.head(stored!.originalKey)).toBeNull();
    });

    const key = await withFilePlatform(async ({ db }) => {
      const account = await createAccount(db, { email: "fallback@example.com", password: "correct horse battery", plan: "free" });
      const created = await createKey(db, { accountId: account.ok ? account.value.id : "", type: "publishable" });
      return created.ok ? created.value : { id: "", key: "" };
    });
    expect((await admin("key", "fallback", "--key", key.key, "--fallback", "monogram")).json()).toMatchObject({
      id: key.id,
      fallback: "monogram",
    });
    expect((await admin("key", "fallback", "--key", key.key, "--fallback", "sometimes")).status).toBe(2);
    const [row] = await withFilePlatform(({ db }) => db.select().from(apiKeys).all());
    expect(row?.fallback).toBe("monogram");
  });
});
