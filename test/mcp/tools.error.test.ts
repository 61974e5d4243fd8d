import { ProtocolError } from "@modelcontextprotocol/client";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { findLogo } from "../../src/catalogue/logos";
import { emptySite } from "../discovery/helpers";
import { db } from "../helpers/catalogue";
import { agent, company, failure, structured } from "./helpers";

/** Replaces a logo's stored PNG master, as a damaged or oversized object would be. */
async function masterKeyOf(logoId: number) {
  return (await findLogo(db, logoId))!.logo.masterKey;
}

// 3.9 MiB: its base64 is just over 5 MB.
const OVERSIZED = new Uint8Array(3_932_161);

describe("invalid arguments get a clear message", () => {
  it.each([
    ["search_logos", {}, "query"],
    ["search_logos", { query: "   " }, "query must not be empty"],
    ["search_logos", { query: "x".repeat(501) }, "query must be at most 500 characters"],
    ["search_logos", { query: "acme", limit: 21 }, "limit must be a whole number from 1 to 20"],
    ["search_logos", { query: "acme", limit: 0 }, "limit must be a whole number from 1 to 20"],
    ["fetch_logo", { query: "acme", maxWidth: 3201 }, "maxWidth must be a whole number from 1 to 3200"],
    ["fetch_logo", { query: "acme", maxWidth: 10.5 }, "maxWidth must be a whole number from 1 to 3200"],
    ["fetch_logo", { query: "acme", variant: "square" }, "variant must be 'full' or 'icon'"],
    ["fetch_logo", { query: "acme", returnType: "file" }, "returnType must be 'url' or 'base64'"],
    ["get_logo", { logoId: "7" }, "logoId"],
    ["get_logo", { logoId: -1 }, "logoId must be a positive whole number"],
    ["get_logo", { logoId: 1, returnType: "svg" }, "returnType must be 'url', 'base64' or 'file'"],
    ["get_company_logos", { companyId: 1.5 }, "companyId must be a whole number"],
    ["insert_logo", { query: "acme", imageWidth: 0 }, "imageWidth must be a number of points from 1 to 10000"],
    ["insert_logo", { query: "acme", imageLeft: -5 }, "imageLeft must be a number of points from 0 to 10000"],
    ["fetch_logos", { domains: [] }, "domains must name at least one domain"],
    ["fetch_logos", { domains: Array.from({ length: 26 }, (_, i) => `d${i}.com`) }, "at most 25 with returnType 'url'"],
    [
      "fetch_logos",
      { domains: Array.from({ length: 6 }, (_, i) => `d${i}.com`), returnType: "base64" },
      "at most 5 with returnType 'base64'",
    ],
    ["fetch_logos", { domains: ["acme.com", `${"a".repeat(250)}.com`] }, "each domain must be at most 253 characters"],
    ["send_feedback", { category: "praise", message: "hi" }, "category must be one of data_quality, bug, feature_request, other"],
    ["send_feedback", { category: "bug", message: "x".repeat(5001) }, "message must be at most 5000 characters"],
    ["send_feedback", { category: "bug", message: "👍".repeat(5001) }, "message must be at most 5000 characters"],
    ["search_logos", { query: `${"日本".repeat(250)}語` }, "query must be at most 500 characters"],
  ] as const)("%s: %#, expecting “%s”", async (tool, args, message) => {
    const { call } = await agent();
    const text = failure(await call(tool, args));
    expect(text).toContain(`Invalid arguments for tool ${tool}`);
    expect(text).toContain(message);
  });
});

describe("lengths are counted in characters, as the spec and the advertised schema count them", () => {
  it("an emoji is one character, not two", async () => {
    const { call, client } = await agent();
    expect(structured(await call("search_logos", { query: "🍎".repeat(500) }))).toEqual({ results: [] });
    const sent = structured(await call("send_feedback", { category: "other", message: "👍".repeat(5000) }));
    expect(sent).toMatchObject({ ok: true });
    const { tools } = await client.listTools();
    const property = (tool: string, name: string) =>
      (tools.find((t) => t.name === tool)!.inputSchema.properties as Record<string, { maxLength?: number }>)[name];
    expect(property("search_logos", "query")?.maxLength).toBe(500);
    expect(property("send_feedback", "message")?.maxLength).toBe(5000);
  });
});

describe("tool failures carry the spec's messages", () => {
  it("unknown logo, company or query", async () => {
    const { call } = await agent();
    expect(failure(await call("get_logo", { logoId: 999999 }))).toBe("Logo with ID 999999 not found");
    expect(failure(await call("get_company_logos", { companyId: 424242 }))).toBe("No company found with ID 424242");
    expect(failure(await call("fetch_logo", { query: "no such company anywhere" }))).toBe('No logo found for "no such company anywhere"');
    const nobody = await emptySite();
    expect(failure(await call("insert_logo", { query: nobody }))).toBe(`No logo found for "${nobody}"`);
    // A search that finds nothing is an empty result, not an error.
    expect(structured(await call("search_logos", { query: "zzzz qqqq" }))).toEqual({ results: [] });
  });

  it("the three-tool form answers the same way", async () => {
    const { call } = await agent("launch", { toolset: "three" });
    expect(failure(await call("get_logo", { logoId: 999999 }))).toBe("Logo with ID 999999 not found");
    expect(failure(await call("get_company_logos", { companyId: 424242 }))).toBe("No company found with ID 424242");
    expect(failure(await call("get_logo", { logoId: 1, returnType: "file" }))).toContain("returnType must be 'base64' or 'url'");
    // Tools of the seven-tool form are not there at all.
    await expect(call("fetch_logo", { query: "acme" })).rejects.toThrow("Tool fetch_logo not found");
  });

  it("a logo over 5 MB in base64: the spec's message for tools and for resource reads; its URL still works", async () => {
    const big = await company("Huge Logo Co", ["hugelogo.com"]);
    await env.LOGOS.put(await masterKeyOf(big.icon!), OVERSIZED);
    const { call, client } = await agent();
    expect(failure(await call("get_logo", { logoId: big.icon, returnType: "base64" }))).toBe(
      "Logo file exceeds 5MB. Use returnType: 'url' instead",
    );
    expect(failure(await call("fetch_logo", { query: "hugelogo.com", returnType: "base64" }))).toBe(
      "Logo file exceeds 5MB. Use returnType: 'url' instead",
    );
    expect(structured(await call("get_logo", { logoId: big.icon })).url).toMatch(/\/assets\//);
    const batch = structured<{ results: unknown[] }>(await call("fetch_logos", { domains: ["hugelogo.com"], returnType: "base64" }));
    expect(batch.results).toEqual([{ domain: "hugelogo.com", ok: false, error: "Logo file exceeds 5MB. Use returnType: 'url' instead" }]);

    const read = client.readResource({ uri: `qt://logo/${big.icon}` });
    await expect(read).rejects.toThrow("Rendered logo exceeds 5MB. Use the public URL or a lower maxWidth.");
  });

  it("an image missing from storage: retrieval fails in base64 mode, never in url mode", async () => {
    const gone = await company("Vanished Co", ["vanished.com"]);
    await env.LOGOS.delete(await masterKeyOf(gone.icon!));
    const { call } = await agent();
    expect(failure(await call("get_logo", { logoId: gone.icon, returnType: "base64" }))).toBe(
      "Unable to retrieve image. Try again or use returnType: 'url'",
    );
    expect(structured(await call("get_logo", { logoId: gone.icon })).logoId).toBe(gone.icon);
    const batch = structured<{ results: unknown[]; summary: unknown }>(
      await call("fetch_logos", { domains: ["vanished.com"], returnType: "base64" }),
    );
    expect(batch).toEqual({
      results: [{ domain: "vanished.com", ok: false, error: "Unable to retrieve image. Try again or use returnType: 'url'" }],
      summary: { requested: 1, resolved: 0, failed: 1 },
    });
    const three = await agent("launch", { toolset: "three" });
    expect(failure(await three.call("get_logo", { logoId: gone.icon }))).toBe(
      "Unable to retrieve image. Try again or use returnType: 'url'",
    );
    // insert_logo has nothing to upload.
    expect(failure(await call("insert_logo", { query: "vanished.com" }))).toBe("Failed to insert logo. Try again later");
  });

  it("a failed upload: get_logo falls back to base64, insert_logo fails with the generic message", async () => {
    const unlucky = await company("Upload Fails Co", ["upload-fails.com"], { full: true });
    const { call } = await agent();
    const fellBack = structured(await call("get_logo", { logoId: unlucky.icon, returnType: "file" }));
    expect(fellBack).not.toHaveProperty("file_id");
    expect(typeof fellBack.base64).toBe("string");
    expect(failure(await call("insert_logo", { query: "upload-fails.com" }))).toBe("Failed to insert logo. Try again later");
  });

  it("fetch_logos in base64: more than 5 MB together is refused as a whole", async () => {
    const names = ["agg-one.com", "agg-two.com"];
    for (const domain of names) {
      const { icon } = await company(domain, [domain]);
      // 2.4 MiB each: either alone fits, both together do not.
      await env.LOGOS.put(await masterKeyOf(icon!), new Uint8Array(2_500_000));
    }
    const { call } = await agent();
    expect(structured<{ summary: unknown }>(await call("fetch_logos", { domains: [names[0]], returnType: "base64" })).summary).toEqual({
      requested: 1,
      resolved: 1,
      failed: 0,
    });
    expect(failure(await call("fetch_logos", { domains: names, returnType: "base64" }))).toBe(
      "Aggregate base64 payload size exceeds 5MB limit",
    );
  });

  it("row 7: resources: an unknown or malformed logo (a broken escape too) is the protocol's not-found error; a bad maxWidth is invalid params", async () => {
    const { client } = await agent();
    // Row 7 of the hardening review: `%ZZ` (a broken escape) answered HTTP 500.
    for (const uri of ["qt://logo/999999", "qt://logo/abc", "qt://logo/0", "qt://logo/%ZZ", "qt://logo/%E0%A4%A"]) {
      const error = await client.readResource({ uri }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProtocolError);
      expect((error as ProtocolError).code).toBe(-32602);
      expect((error as ProtocolError).data).toEqual({ uri });
    }
    const acme = await company("Resource Errors Co", ["resource-errors.com"]);
    for (const maxWidth of ["0", "3201", "abc"]) {
      await expect(client.readResource({ uri: `qt://logo/${acme.icon}?maxWidth=${maxWidth}` })).rejects.toThrow(
        "maxWidth must be a whole number from 1 to 3200",
      );
    }
  });

  it("storage failing underneath: each tool's generic message names its operation, never the detail", async () => {
    const { call, client } = await agent();
    const acme = await company("Storage Failure Co", ["storage-failure.com"]);
    await env.DB.exec("DROP TABLE catalogue_search");
    expect(failure(await call("search_logos", { query: "anything" }))).toBe("Search failed. Try again later");
    await env.DB.exec("DROP TABLE company_tickers");
    expect(failure(await call("fetch_logo", { query: "ABC" }))).toBe("Failed to fetch logo. Try again later");
    expect(failure(await call("insert_logo", { query: "ABC" }))).toBe("Failed to insert logo. Try again later");
    await env.DB.exec("DROP TABLE logos");
    expect(failure(await call("get_logo", { logoId: acme.icon }))).toBe("Failed to get logo. Try again later");
    expect(failure(await call("get_company_logos", { companyId: acme.companyId }))).toBe("Failed to get company logos. Try again later");
    expect(failure(await call("fetch_logos", { domains: ["storage-failure.com"] }))).toBe("Failed to fetch logos. Try again later");
    // A resource read: the protocol's internal error with the generic message; it carried the SQL.
    const read = await client.readResource({ uri: `qt://logo/${acme.icon}` }).catch((e: unknown) => e);
    expect(read).toBeInstanceOf(ProtocolError);
    expect((read as ProtocolError).code).toBe(-32603);
    expect((read as ProtocolError).message).toContain("Failed to get logo. Try again later");
    expect((read as ProtocolError).message).not.toMatch(/select|from|params/i);
  });

  it("feedback: the sixth of a day is refused and not stored", async () => {
    const { call } = await agent();
    for (let remaining = 4; remaining >= 0; remaining--) {
      expect(structured(await call("send_feedback", { category: "other", message: `note ${remaining}` })).remaining).toBe(remaining);
    }
    expect(failure(await call("send_feedback", { category: "other", message: "one too many" }))).toBe(
      "Daily feedback limit (5) exceeded. Try again tomorrow.",
    );
  });
});
