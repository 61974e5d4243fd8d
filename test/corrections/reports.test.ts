import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { closeItem, listReports, openItem, replaceReportedLogo } from "../../src/corrections/reports";
import { readPurgeJournal } from "../../src/purge/purge";
import { rest, secretKeyFor } from "../api/helpers";
import { preparedFrom, redPng } from "../fixtures/images";
import { db } from "../helpers/catalogue";
import { assetKeyOf, BASE, freshCompany, freshKey } from "../lookup/helpers";
import { agent, structured } from "../mcp/helpers";
import { signedUp, textOf } from "../web/helpers";

/**
 * Reports (issue 41, "Reports"; docs/corrections.md): the portal's "Report this logo",
 * send_feedback's data_quality and POST /v1/reports land in one queue that `admin reports list`
 * shows (listReports, the command's own function), duplicates of a logo folded into one item;
 * resolving it is what `admin reports resolve` runs, and the reporter sees the outcome.
 */
const report = (key: string, body: unknown) =>
  rest("/v1/reports", key, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

describe("reports reach the operators' queue", () => {
  it("from each of the three doors, folded into one item per logo", async () => {
    const { domain, logoId } = await freshCompany();

    const { key } = await secretKeyFor("launch");
    const filed = await report(key, { domain, kind: "wrong_logo", message: "That is another company's mark", logoId });
    expect(filed.status).toBe(201);
    const receipt = (await filed.json()) as { reportId: number; itemId: number; folded: boolean };
    expect(receipt).toMatchObject({ reportId: expect.any(Number), itemId: expect.any(Number), domain, logoId, status: "open" });

    const { call } = await agent("launch");
    structured(await call("send_feedback", { category: "data_quality", message: "Outdated mark, they rebranded", domain }));
    // Feedback about the service itself is not a report.
    structured(await call("send_feedback", { category: "bug", message: "The tool was slow", domain }));

    const { browser, email } = await signedUp();
    const form = await browser.fetch(`/portal/corrections/report?domain=${domain}&logoId=${logoId}`);
    expect(form.status).toBe(200);
    const sent = await browser.postForm("/portal/corrections/report", {
      domain,
      logoId: String(logoId),
      kind: "poor_quality",
      message: "Blurry at 128 px",
    });
    expect(sent.status).toBe(303);

    // A second report of the same logo through the API says it was folded in.
    const again = await report(key, { domain: `www.${domain}`, kind: "outdated", message: "Still wrong" });
    expect(await again.json()).toMatchObject({ itemId: receipt.itemId, folded: true });

    const listed = await listReports(db, { open: true, domain });
    expect(listed.ok).toBe(true);
    if (!listed.ok) return;
    expect(listed.value.items).toHaveLength(1);
    const [item] = listed.value.items;
    expect(item).toMatchObject({ id: receipt.itemId, domain, logoId, status: "open" });
    expect(item!.reports.map((r) => [r.via, r.kind, r.message])).toEqual([
      ["rest", "wrong_logo", "That is another company's mark"],
      ["mcp", "other", "Outdated mark, they rebranded"],
      ["portal", "poor_quality", "Blurry at 128 px"],
      ["rest", "outdated", "Still wrong"],
    ]);
    expect(item!.reports[2]!.reporter).toBe(email);

    // The reporter's portal shows it waiting.
    const page = await textOf(await browser.fetch("/portal/corrections"));
    expect(page).toContain(domain);
    expect(page).toContain("Waiting for an operator");
  });

  it("resolved with replace, the new file is served within seconds, and the reporter sees the outcome", async () => {
    const { domain, logoId } = await freshCompany();
    const token = await freshKey();
    const before = assetKeyOf(
      (await exports.default.fetch(`${BASE}/${domain}?token=${token}`, { redirect: "manual" })).headers.get("location")!,
    );

    const { browser } = await signedUp();
    await browser.postForm("/portal/corrections/report", { domain, logoId: String(logoId), kind: "wrong_logo", message: "Not their logo" });
    const listed = await listReports(db, { open: true, domain });
    const itemId = listed.ok ? listed.value.items[0]!.id : 0;

    const item = await openItem(db, itemId);
    expect(item.ok).toBe(true);
    if (!item.ok) return;
    const image = await preparedFrom(redPng);
    const replaced = await replaceReportedLogo(db, env.LOGOS, item.value, image, image.contentHash);
    expect(replaced.ok).toBe(true);
    expect(await closeItem(db, item.value, "replace", "Replaced with the mark from their press kit")).toMatchObject({
      ok: true,
      value: { status: "resolved", action: "replace" },
    });
    // What every isolate does within ten seconds of the journal row.
    await readPurgeJournal(env);

    const after = assetKeyOf(
      (await exports.default.fetch(`${BASE}/${domain}?token=${token}`, { redirect: "manual" })).headers.get("location")!,
    );
    expect(after).not.toBe(before);
    expect(after).toContain(image.contentHash.slice(0, 16));

    const page = await textOf(await browser.fetch("/portal/corrections"));
    expect(page).toContain("Replaced with the mark from their press kit");
    expect(page).not.toContain("Waiting for an operator");
    expect(await openItem(db, itemId)).toMatchObject({ ok: false, error: { code: "conflict" } });
    // A report after the item closed opens a new one rather than folding into the closed.
    await browser.postForm("/portal/corrections/report", { domain, kind: "other", message: "Better, but the colour is off" });
    const reopened = await listReports(db, { open: true, domain });
    expect(reopened.ok && reopened.value.items.map((i) => i.id)).not.toContain(itemId);
    expect(reopened.ok && reopened.value.items).toHaveLength(1);
  });

  it("POST /v1/reports refuses what it cannot file, with the spec's JSON errors", async () => {
    const { domain } = await freshCompany();
    const { key } = await secretKeyFor("launch");
    const bad = async (body: unknown) => {
      const response = await report(key, body);
      return { status: response.status, body: (await response.json()) as { error: { code: string; message: string } } };
    };
    expect(await bad({ domain, kind: "ugly", message: "x" })).toMatchObject({ status: 400 });
    expect(await bad({ domain, kind: "other", message: "" })).toMatchObject({ status: 400 });
    expect(await bad({ domain, kind: "other", message: "x".repeat(5001) })).toMatchObject({ status: 400 });
    expect(await bad({ domain: "not a domain", kind: "other", message: "x" })).toMatchObject({ status: 400 });
    expect(await bad({ kind: "other", message: "x" })).toMatchObject({ status: 400 });
    expect(await bad({ domain: "other-company.com", kind: "other", message: "x", logoId: 999_999 })).toMatchObject({ status: 404 });

    const token = await freshKey();
    expect((await report(token, { domain, kind: "other", message: "x" })).status).toBe(401);
    expect((await report("", { domain, kind: "other", message: "x" })).status).toBe(401);
    expect((await listReports(db, { domain })).ok && (await listReports(db, { domain }))).toMatchObject({ value: { items: [] } });
  });
});
