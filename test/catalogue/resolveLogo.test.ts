import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { resolveLogo, type Subject } from "../../src/catalogue/resolveLogo";
import { catalogueReader } from "../../src/lib/db";
import { darkLogo40x20 } from "../fixtures/images";
import { addCompany } from "../helpers/catalogue";

describe("resolveLogo's caches", () => {
  it("keep a miss no longer than the minute the data centre's cache keeps it, so an import reaches lookups within it", async () => {
    const domain = `imported-soon-${crypto.randomUUID().slice(0, 8)}.com`;
    const subject: Subject = { kind: "domain", value: domain };
    const db = catalogueReader(env.DB);
    const asked = Date.now();
    expect(await resolveLogo(db, subject, asked)).toBeNull();
    await addCompany({ name: "Imported Soon", domains: [domain] }, darkLogo40x20());

    // Within the minute the miss stands, in the isolate and in the data centre's cache alike.
    expect(await resolveLogo(db, subject, asked + 59_000)).toBeNull();
    // Past it, the isolate does not take the data centre's cached miss for another minute of its own.
    expect(await resolveLogo(db, subject, asked + 61_000)).toMatchObject({ domain });
  });
});
