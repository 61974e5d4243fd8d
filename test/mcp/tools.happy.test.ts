import { env, exports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import packageJson from "../../package.json";
import { feedback } from "../../schema";
import { emptySite } from "../discovery/helpers";
import { db } from "../helpers/catalogue";
import { darkLogo40x20, vectorLogo40x20, webpForAvif } from "../fixtures/images";
import { BASE } from "../oauth/helpers";
import { agent, assetPath, company, structured } from "./helpers";

const SEVEN = ["fetch_logo", "fetch_logos", "get_company_logos", "get_logo", "insert_logo", "search_logos", "send_feedback"];

const pngBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

describe.each(["2025", "2026"] as const)("seven-tool form, %s-era client", (era) => {
  it("lists seven tools, each with a title, description, read-only hints and both schemas", async () => {
    const { client } = await agent("launch", { era });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(SEVEN);
    for (const tool of tools) {
      expect(tool.title).toBeTruthy();
      expect(tool.description!.length).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema).toBeDefined();
      expect(typeof tool.annotations?.readOnlyHint).toBe("boolean");
    }
    expect(tools.find((t) => t.name === "search_logos")!.annotations!.readOnlyHint).toBe(true);
    expect(tools.find((t) => t.name === "send_feedback")!.annotations!.readOnlyHint).toBe(false);
    // returnType file uploads a new file on each call: not for a client to run unasked.
    expect(tools.find((t) => t.name === "get_logo")!.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false });
  });

  it("search_logos → get_logo: metadata first, then the delivery record with a working public URL", async () => {
    const acme = await company("Acme Rockets", ["acmerockets.example"], { full: true });
    const { call } = await agent("launch", { era });

    const found = structured<{ results: Record<string, unknown>[] }>(await call("search_logos", { query: "acme rock" }));
    expect(found.results).toEqual([
      {
        logoId: acme.full,
        companyId: acme.companyId,
        companyName: "Acme Rockets",
        nameSource: "catalogue",
        domain: "acmerockets.example",
        variant: "full",
        sourceWidth: 40,
        sourceHeight: 20,
      },
      {
        logoId: acme.icon,
        companyId: acme.companyId,
        companyName: "Acme Rockets",
        nameSource: "catalogue",
        domain: "acmerockets.example",
        variant: "icon",
        sourceWidth: 40,
        sourceHeight: 20,
      },
    ]);

    const result = await call("get_logo", { logoId: acme.icon });
    const record = structured<Record<string, unknown>>(result);
    expect(record).toMatchObject({
      logoId: acme.icon,
      companyId: acme.companyId,
      companyName: "Acme Rockets",
      domain: "acmerockets.example",
      variant: "icon",
      format: "png",
      mimeType: "image/png",
      resourceUri: `qt://logo/${acme.icon}`,
      width: 40,
      height: 20,
      sourceWidth: 40,
      sourceHeight: 20,
      dimensionsStatus: "known",
    });
    expect(record.url).toMatch(new RegExp(`^${BASE}/assets/[A-Za-z0-9_-]+$`));
    expect(result.content).toContainEqual(
      expect.objectContaining({ type: "resource_link", uri: `qt://logo/${acme.icon}`, mimeType: "image/png" }),
    );

    const image = await exports.default.fetch(record.url as string);
    expect(image.status).toBe(200);
    expect(image.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(darkLogo40x20().files.master);
  });

  it("get_logo with maxWidth scales down only, and base64 is the PNG itself", async () => {
    const acme = await company("Scale Co", ["scaleco.example"]);
    const { call } = await agent("launch", { era });

    const smaller = structured<Record<string, unknown>>(await call("get_logo", { logoId: acme.icon, maxWidth: 10, returnType: "base64" }));
    expect(smaller).toMatchObject({
      width: 10,
      height: 5,
      sourceWidth: 40,
      sourceHeight: 20,
      resourceUri: `qt://logo/${acme.icon}?maxWidth=10`,
    });
    expect(smaller.url).toMatch(/\?maxWidth=10$/);
    const png = Uint8Array.from(atob(smaller.base64 as string), (c) => c.charCodeAt(0));
    expect([...png.slice(1, 4)]).toEqual([0x50, 0x4e, 0x47]);
    // IHDR width and height.
    const view = new DataView(png.buffer);
    expect([view.getUint32(16), view.getUint32(20)]).toEqual([10, 5]);

    const larger = structured<Record<string, unknown>>(await call("get_logo", { logoId: acme.icon, maxWidth: 3200, returnType: "base64" }));
    expect(larger).toMatchObject({ width: 40, height: 20, resourceUri: `qt://logo/${acme.icon}` });
    expect(larger.base64).toBe(pngBase64(darkLogo40x20().files.master));
  });

  it("a maxWidth at or above the source width changes nothing; one below it scales down to the ladder", async () => {
    const domain = `unscaled-${era}.com`;
    const acme = await company(`Unscaled ${era} Co`, [domain]);
    const { call, client } = await agent("launch", { era });
    // 40 and 45 round down to the rung 32, under the source's 40: compared before rounding, they are no scale-down.
    for (const maxWidth of [40, 45]) {
      const record = structured<Record<string, unknown>>(await call("get_logo", { logoId: acme.icon, maxWidth, returnType: "base64" }));
      expect(record, `maxWidth ${maxWidth}`).toMatchObject({ width: 40, height: 20, resourceUri: `qt://logo/${acme.icon}` });
      expect(record.url as string).not.toContain("maxWidth");
      expect(record.base64).toBe(pngBase64(darkLogo40x20().files.master));
      const read = await client.readResource({ uri: `qt://logo/${acme.icon}?maxWidth=${maxWidth}` });
      expect(read.contents).toEqual([
        { uri: `qt://logo/${acme.icon}`, mimeType: "image/png", blob: pngBase64(darkLogo40x20().files.master) },
      ]);
    }
    const fetched = structured<Record<string, unknown>>(await call("fetch_logo", { query: domain, maxWidth: 45 }));
    expect(fetched).toMatchObject({ width: 40, resourceUri: `qt://logo/${acme.icon}` });
    const batch = structured<{ results: Record<string, unknown>[] }>(await call("fetch_logos", { domains: [domain], maxWidth: 45 }));
    expect(batch.results[0]).toMatchObject({ width: 40, height: 20 });

    const under = structured<Record<string, unknown>>(await call("get_logo", { logoId: acme.icon, maxWidth: 39 }));
    expect(under).toMatchObject({ width: 32, height: 16, resourceUri: `qt://logo/${acme.icon}?maxWidth=32` });
    expect(under.url).toMatch(/\?maxWidth=32$/);
  });
});

describe("seven-tool form: formats and brand colours", () => {
  const bytesOf = (base64: string) => Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));

  it("get_logo and fetch_logo deliver WebP, AVIF and JPEG on request, PNG by default, with the brand colour", async () => {
    const acme = await company("Format Co", ["formatco.example"], { brandColor: "#ff6600" });
    const { call } = await agent();
    const png = structured<Record<string, unknown>>(await call("get_logo", { logoId: acme.icon }));
    expect(png).toMatchObject({ format: "png", mimeType: "image/png", brandColor: "#ff6600" });

    for (const [format, mimeType, isIt] of [
      ["webp", "image/webp", (b: Uint8Array) => String.fromCharCode(...b.slice(8, 12)) === "WEBP"],
      ["avif", "image/avif", (b: Uint8Array) => String.fromCharCode(...b.slice(4, 8)) === "ftyp"],
      ["jpg", "image/jpeg", (b: Uint8Array) => b[0] === 0xff && b[1] === 0xd8],
    ] as const) {
      const record = structured<Record<string, unknown>>(
        await call("get_logo", { logoId: acme.icon, maxWidth: 16, returnType: "base64", format }),
      );
      expect(record, format).toMatchObject({ format, mimeType, width: 16, height: 8 });
      expect(isIt(bytesOf(record.base64 as string)), format).toBe(true);
      expect(record.url).toMatch(new RegExp(`\\?maxWidth=16&format=${format}$`));
      const image = await exports.default.fetch(record.url as string);
      expect(image.headers.get("content-type"), format).toBe(mimeType);
      expect(await env.IMAGES.info(image.body!), format).toMatchObject({ width: 16 });
    }
    const fetched = structured<Record<string, unknown>>(
      await call("fetch_logo", { query: "Format Co", format: "webp", returnType: "base64" }),
    );
    expect(fetched).toMatchObject({ ok: true, format: "webp", mimeType: "image/webp", brandColor: "#ff6600" });
    expect(String.fromCharCode(...bytesOf(fetched.base64 as string).slice(8, 12))).toBe("WEBP");
    const searched = structured<{ results: Record<string, unknown>[] }>(await call("search_logos", { query: "Format Co" }));
    expect(searched.results[0]).toMatchObject({ brandColor: "#ff6600" });
  });

  it("says what was made where Cloudflare could not make the AVIF asked, and delivers that", async () => {
    const acme = await company("Fallback Co", ["fallbackco.example"]);
    const { call } = await agent("launch", { env: { IMAGES: webpForAvif(env.IMAGES) } });
    const isWebp = (base64: unknown) => String.fromCharCode(...bytesOf(base64 as string).slice(8, 12)) === "WEBP";
    const got = structured<Record<string, unknown>>(
      await call("get_logo", { logoId: acme.icon, maxWidth: 16, returnType: "base64", format: "avif" }),
    );
    expect(got).toMatchObject({ format: "webp", mimeType: "image/webp", width: 16 });
    expect(isWebp(got.base64)).toBe(true);
    const fetched = structured<Record<string, unknown>>(
      await call("fetch_logo", { query: "Fallback Co", format: "avif", returnType: "base64" }),
    );
    expect(fetched).toMatchObject({ ok: true, format: "webp", mimeType: "image/webp" });
    expect(isWebp(fetched.base64)).toBe(true);
  });

  it("format svg delivers the sanitised vector where there is one, and says png where there is none", async () => {
    const vector = await company("Vector Labs", ["vectorlabs.example"], { image: vectorLogo40x20() });
    const raster = await company("Raster Labs", ["rasterlabs.example"]);
    const { call } = await agent();
    const svg = structured<Record<string, unknown>>(await call("get_logo", { logoId: vector.icon, format: "svg", returnType: "base64" }));
    expect(svg).toMatchObject({ format: "svg", mimeType: "image/svg+xml" });
    expect(new TextDecoder().decode(bytesOf(svg.base64 as string))).toMatch(/^<svg /);
    const served = await exports.default.fetch(svg.url as string);
    expect([served.headers.get("content-type"), served.headers.get("content-security-policy")?.startsWith("default-src 'none'")]).toEqual([
      "image/svg+xml",
      true,
    ]);
    const png = structured<Record<string, unknown>>(await call("fetch_logo", { query: "Raster Labs", format: "svg" }));
    expect(png).toMatchObject({ logoId: raster.icon, format: "png", mimeType: "image/png" });
  });
});

describe("seven-tool form: fetching", () => {
  it("fetch_logo finds by name, domain or ticker, prefers the asked variant and says when it fell back", async () => {
    const both = await company("Northwind Traders", ["northwind-traders.com"], { full: true, ticker: "NWT" });
    const iconOnly = await company("Iconic Labs", ["iconic.example"]);
    const { call } = await agent();

    for (const query of ["Northwind Traders", "northwind-traders.com", "NWT", "https://www.northwind-traders.com/about"]) {
      const record = structured(await call("fetch_logo", { query, variant: "full" }));
      expect(record).toMatchObject({ ok: true, logoId: both.full, variant: "full", companyName: "Northwind Traders" });
      expect(record).not.toHaveProperty("variantFallback");
    }
    const fellBack = structured(await call("fetch_logo", { query: "Iconic Labs", variant: "full", maxWidth: 20, returnType: "base64" }));
    // 20 is served as the ladder's 16 (docs/assets.md, "Widths"), and the record says so.
    expect(fellBack).toMatchObject({ ok: true, logoId: iconOnly.icon, variant: "icon", variantFallback: true, width: 16, height: 8 });
    expect(typeof fellBack.base64).toBe("string");
  });

  it("search_logos and fetch_logo find a company by ISIN, crypto:SYMBOL or an email address at its domain", async () => {
    const held = await company("Keyholder Group", ["keyholder-group.com"], {
      identifiers: [
        { scheme: "isin", value: "US0378331005" },
        { scheme: "crypto", value: "KEYH" },
      ],
    });
    const { call } = await agent();
    for (const query of ["us0378331005", "crypto:keyh", "Jane.Doe+news@Keyholder-Group.com"]) {
      const { results } = structured(await call("search_logos", { query })) as { results: Array<Record<string, unknown>> };
      expect(results, query).toEqual([expect.objectContaining({ companyId: held.companyId, companyName: "Keyholder Group" })]);
      expect(structured(await call("fetch_logo", { query })), query).toMatchObject({ ok: true, logoId: held.icon });
    }
  });

  it("get_logo with returnType file uploads the PNG to the file API and returns its id", async () => {
    const acme = await company("Filer Inc", ["filer.example"]);
    const { call } = await agent();
    const record = structured(await call("get_logo", { logoId: acme.icon, returnType: "file" }));
    expect(record.file_id).toMatch(/^file_/);
    expect(record).not.toHaveProperty("base64");
    expect(record.url).toMatch(/\/assets\//);

    const [upload] = (await (
      await fetch(`${env.ANTHROPIC_BASE_URL}/_uploads?filename=logo-filer.example-${acme.icon}.png`)
    ).json()) as Record<string, unknown>[];
    expect(upload).toMatchObject({
      id: record.file_id,
      mimeType: "image/png",
      sizeBytes: darkLogo40x20().files.master.byteLength,
      anthropicVersion: "2023-06-01",
    });
  });

  it("get_company_logos lists every logo, filters by variant and reports usage", async () => {
    const acme = await company("Listed Co", ["listed.example"], { full: true });
    const { call } = await agent("launch");
    const all = structured<{ logos: Record<string, unknown>[]; _meta: { usage: Record<string, { current: number; limit: number }> } }>(
      await call("get_company_logos", { companyId: acme.companyId }),
    );
    expect(all.logos.map((l) => [l.logoId, l.variant])).toEqual([
      [acme.full, "full"],
      [acme.icon, "icon"],
    ]);
    expect(all.logos[0]).toEqual({
      logoId: acme.full,
      companyId: acme.companyId,
      companyName: "Listed Co",
      domain: "listed.example",
      variant: "full",
      format: "png",
      mimeType: "image/png",
      url: expect.stringMatching(/^https:\/\/logos\.test\/assets\//),
      resourceUri: `qt://logo/${acme.full}`,
      sourceWidth: 40,
      sourceHeight: 20,
    });
    expect(all._meta.usage.companies).toEqual({ current: 1, limit: 1000 });
    // Launch counts per minute; this connection's initialize, its notification and this call came first.
    expect(all._meta.usage.requests!.limit).toBe(1000);
    expect(all._meta.usage.requests!.current).toBeGreaterThanOrEqual(1);

    const icons = structured<{ logos: Record<string, unknown>[] }>(
      await call("get_company_logos", { companyId: acme.companyId, variant: "icon" }),
    );
    expect(icons.logos.map((l) => l.logoId)).toEqual([acme.icon]);
  });

  it("insert_logo uploads the wordmark and explains store_blob, then execute_office_js with the placement", async () => {
    const acme = await company("Slide Corp", ["slide.example"], { full: true });
    const { call } = await agent("free");
    const result = structured<{ file_id: string; blob_name: string; companyName: string; instructions: string; _meta: { usage: unknown } }>(
      await call("insert_logo", { query: "Slide Corp" }),
    );
    expect(result.file_id).toMatch(/^file_/);
    expect(result.blob_name).toBe(`logo-slide.example-${acme.full}.png`);
    expect(result.companyName).toBe("Slide Corp");
    const { instructions } = result;
    expect(instructions.indexOf("store_blob")).toBeGreaterThan(-1);
    expect(instructions.indexOf("store_blob")).toBeLessThan(instructions.indexOf("execute_office_js"));
    expect(instructions).toContain(result.file_id);
    // Defaults: 150 points wide, height from the 2:1 aspect ratio, at (300, 200).
    expect(instructions).toContain("imageLeft: 300, imageTop: 200, imageWidth: 150, imageHeight: 75");
    expect(instructions).toContain("setSelectedDataAsync");
    expect(instructions).not.toMatch(/iVBORw0KGgo/); // no PNG data embedded
    expect(instructions).toMatch(/^To insert the logo of slide\.example into the current slide:/);
    expect(result._meta.usage).toMatchObject({ companies: { current: 1, limit: 30 } });

    const placed = structured<{ instructions: string }>(
      await call("insert_logo", { query: "slide.example", imageWidth: 90, imageHeight: 30, imageLeft: 10, imageTop: 20.5 }),
    );
    expect(placed.instructions).toContain("imageLeft: 10, imageTop: 20.5, imageWidth: 90, imageHeight: 30");
  });

  it("fetch_logos keeps input order, reports failures in place, counts a summary, and falls back per domain", async () => {
    const a = await company("Alpha Batch", ["alpha-batch.com"], { full: true });
    const b = await company("Beta Batch", ["beta-batch.com"]);
    const { call } = await agent();
    const unknown = await emptySite();
    const batch = structured<{ results: Record<string, unknown>[]; summary: unknown }>(
      await call("fetch_logos", {
        domains: ["beta-batch.com", "not a domain", "WWW.Alpha-Batch.com", unknown],
        variant: "full",
      }),
    );
    expect(batch.results).toEqual([
      expect.objectContaining({
        domain: "beta-batch.com",
        ok: true,
        companyId: b.companyId,
        resolvedDomain: "beta-batch.com",
        logoId: b.icon,
        variant: "icon",
        variantFallback: true,
      }),
      { domain: "not a domain", ok: false, error: "Invalid domain format" },
      expect.objectContaining({
        domain: "WWW.Alpha-Batch.com",
        ok: true,
        resolvedDomain: "alpha-batch.com",
        logoId: a.full,
        variant: "full",
      }),
      { domain: unknown, ok: false, error: `No company found for domain ${unknown}` },
    ]);
    expect(batch.results[2]).not.toHaveProperty("variantFallback");
    expect(batch.summary).toEqual({ requested: 4, resolved: 2, failed: 2 });

    const encoded = structured<{ results: Record<string, unknown>[] }>(
      await call("fetch_logos", { domains: ["alpha-batch.com"], returnType: "base64", maxWidth: 8 }),
    );
    expect(encoded.results[0]).toMatchObject({ ok: true, width: 8, height: 4, base64: expect.any(String) });
  });

  it("send_feedback stores the report with its account and clients, and returns the receipt", async () => {
    const { call, account, oauthClientId } = await agent();
    const receipt = structured(
      await call("send_feedback", {
        category: "data_quality",
        message: "The icon is outdated",
        domain: "acme.example",
        logoId: 7,
        tool: "get_logo",
      }),
    );
    expect(receipt).toEqual({
      ok: true,
      remaining: 4,
      referenceId: expect.stringMatching(/^fb-\d+-\d+$/),
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      serverVersion: packageJson.version,
    });
    const rows = await db.select().from(feedback).where(eq(feedback.accountId, account.id));
    expect(rows).toEqual([
      expect.objectContaining({
        category: "data_quality",
        message: "The icon is outdated",
        domain: "acme.example",
        logoId: 7,
        tool: "get_logo",
        oauthClientId,
      }),
    ]);
    expect(rows[0]!.clientId).toBeTruthy();
    expect(receipt.referenceId).toBe(`fb-${rows[0]!.createdAt.getTime()}-${rows[0]!.id}`);
  });
});

describe("resources", () => {
  it.each(["2025", "2026"] as const)("qt://logo/{logoId}{?maxWidth} reads as a base64 PNG blob (%s-era client)", async (era) => {
    const acme = await company("Resource Co", ["resource.example"]);
    const { client } = await agent("launch", { era });
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates).toEqual([expect.objectContaining({ uriTemplate: "qt://logo/{logoId}{?maxWidth}", mimeType: "image/png" })]);

    const full = await client.readResource({ uri: `qt://logo/${acme.icon}` });
    expect(full.contents).toEqual([
      { uri: `qt://logo/${acme.icon}`, mimeType: "image/png", blob: pngBase64(darkLogo40x20().files.master) },
    ]);
    const small = await client.readResource({ uri: `qt://logo/${acme.icon}?maxWidth=20` });
    expect(small.contents[0]!.uri).toBe(`qt://logo/${acme.icon}?maxWidth=16`);
    const png = Uint8Array.from(atob((small.contents[0] as { blob: string }).blob), (c) => c.charCodeAt(0));
    expect(new DataView(png.buffer).getUint32(16)).toBe(16);
  });
});

describe("three-tool form (/mcp?toolset=three)", () => {
  it.each(["2025", "2026"] as const)("lists three tools and answers with bare arrays (%s-era client)", async (era) => {
    const acme = await company("Triple Co", ["triple.example"], { full: true });
    const { client, call } = await agent("launch", { toolset: "three", era });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["get_company_logos", "get_logo", "search_logos"]);

    const found = await call("search_logos", { query: "triple.example" });
    expect(found.isError).toBeFalsy();
    const records = [
      {
        logoId: acme.full,
        companyId: acme.companyId,
        companyName: "Triple Co",
        nameSource: "catalogue",
        domain: "triple.example",
        variant: "full",
        width: 40,
        height: 20,
        format: "png",
      },
      {
        logoId: acme.icon,
        companyId: acme.companyId,
        companyName: "Triple Co",
        nameSource: "catalogue",
        domain: "triple.example",
        variant: "icon",
        width: 40,
        height: 20,
        format: "png",
      },
    ];
    expect(JSON.parse((found.content[0] as { text: string }).text)).toEqual(records);
    const listed = await call("get_company_logos", { companyId: acme.companyId });
    expect(JSON.parse((listed.content[0] as { text: string }).text)).toEqual(records);
  });

  it("get_logo gives base64 by default, or a signed URL that works for an hour", async () => {
    const acme = await company("Signed Co", ["signed.example"]);
    const { call } = await agent("launch", { toolset: "three" });
    const encoded = structured(await call("get_logo", { logoId: acme.icon }));
    expect(encoded).toEqual({
      base64: pngBase64(darkLogo40x20().files.master),
      mimeType: "image/png",
      format: "png",
      width: 40,
      height: 20,
      companyName: "Signed Co",
      nameSource: "catalogue",
    });

    const linked = structured<{ url: string; expiresIn: number }>(await call("get_logo", { logoId: acme.icon, returnType: "url" }));
    expect(linked).toMatchObject({
      expiresIn: 3600,
      mimeType: "image/png",
      format: "png",
      width: 40,
      height: 20,
      companyName: "Signed Co",
      nameSource: "catalogue",
    });
    const url = new URL(linked.url);
    expect(url.searchParams.get("signature")).toMatch(/^[\w-]{43}$/);
    expect(Number(url.searchParams.get("expires")) - Date.now() / 1000).toBeGreaterThan(3590);
    const image = await exports.default.fetch(linked.url);
    expect(image.status).toBe(200);
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(darkLogo40x20().files.master);
    expect(assetPath(linked.url)).toMatch(/^\/assets\//);
  });
});
