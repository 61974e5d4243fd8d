import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { darkLogo40x20 } from "../fixtures/images";
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
  });

  it("search_logos → get_logo: metadata first, then the delivery record with a working public URL", async () => {
    const acme = await company("Acme Rockets", ["acmerockets.example"], { full: true });
    const { call } = await agent("launch", { era });

    const found = structured<{ results: Record<string, unknown>[] }>(await call("search_logos", { query: "acme rock" }));
    expect(found.results).toEqual([
      { logoId: acme.full, companyId: acme.companyId, companyName: "Acme Rockets", domain: "acmerockets.example", variant: "full", sourceWidth: 40, sourceHeight: 20 },
      { logoId: acme.icon, companyId: acme.companyId, companyName: "Acme Rockets", domain: "acmerockets.example", variant: "icon", sourceWidth: 40, sourceHeight: 20 },
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
    expect(result.content).toContainEqual(expect.objectContaining({ type: "resource_link", uri: `qt://logo/${acme.icon}`, mimeType: "image/png" }));

    const image = await exports.default.fetch(record.url as string);
    expect(image.status).toBe(200);
    expect(image.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(darkLogo40x20().master);
  });

  it("get_logo with maxWidth scales down only, and base64 is the PNG itself", async () => {
    const acme = await company("Scale Co", ["scaleco.example"]);
    const { call } = await agent("launch", { era });

    const smaller = structured<Record<string, unknown>>(await call("get_logo", { logoId: acme.icon, maxWidth: 10, returnType: "base64" }));
    expect(smaller).toMatchObject({ width: 10, height: 5, sourceWidth: 40, sourceHeight: 20, resourceUri: `qt://logo/${acme.icon}?maxWidth=10` });
    expect(smaller.url).toMatch(/\?maxWidth=10$/);
    const png = Uint8Array.from(atob(smaller.base64 as string), (c) => c.charCodeAt(0));
    expect([...png.slice(1, 4)]).toEqual([0x50, 0x4e, 0x47]);
    // IHDR width and height.
    const view = new DataView(png.buffer);
    expect([view.getUint32(16), view.getUint32(20)]).toEqual([10, 5]);

    const larger = structured<Record<string, unknown>>(await call("get_logo", { logoId: acme.icon, maxWidth: 3200, returnType: "base64" }));
    expect(larger).toMatchObject({ width: 40, height: 20, resourceUri: `qt://logo/${acme.icon}` });
    expect(larger.base64).toBe(pngBase64(darkLogo40x20().master));
  });
});
