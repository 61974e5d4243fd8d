import { join } from "node:path";
import { AxeBuilder } from "@axe-core/playwright";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../src/lib/db";
import { runAdmin } from "../../tools/admin/run";
import { projectRoot } from "../../tools/platform";
import { inProcess } from "../tools/helpers";
import { launchChromium } from "./chromium";
import { type RunningWorker, startWorker } from "./worker";

/**
 * Issue 41's journey in a real browser (Chromium through playwright-core) against the Worker on
 * workerd: a customer reports a logo from the dashboard's playground, an operator resolves the
 * report with `npm run admin -- reports resolve` (the command itself, run in-process on the
 * Worker's own D1 and R2), and the customer sees the outcome under Corrections.
 */
let worker: RunningWorker;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [worker, browser] = await Promise.all([startWorker(), launchChromium()]);
  const context = await browser.newContext({ baseURL: worker.base, viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(8_000);
  page = await context.newPage();
});

afterAll(async () => {
  await browser?.close();
  await worker?.dispose();
});

/** No serious or critical accessibility violation on the page, as the portal's other pages are held to. */
async function accessible(p: Page) {
  await p.waitForLoadState("load");
  const axe = await new AxeBuilder({ page: p }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]).analyze();
  const serious = axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
}

/** `npm run admin -- …` on the running Worker's storage. */
function admin(...args: string[]) {
  const { d1, bucket } = worker.storage;
  const platform = { db: createDb(d1), d1, bucket, dispose: async () => undefined };
  return inProcess((io) => runAdmin(args, io, async () => platform));
}

describe("Report this logo", () => {
  it("goes from the playground to the operators' queue, and its outcome comes back to the portal", async () => {
    await page.goto("/portal/signup");
    await page.getByRole("textbox", { name: "Email" }).fill(`reporter-${Date.now()}@example.com`);
    await page.getByLabel("Password").fill("a long enough password");
    await page.getByRole("button", { name: "Create account" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("Your account is ready");

    await page.getByRole("textbox", { name: "Domain" }).fill("github.com");
    await page.getByRole("button", { name: "Show logo" }).click();
    await page.getByRole("link", { name: "Report this logo" }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Report the logo of github.com");
    await accessible(page);
    await page.getByLabel("What is wrong?").selectOption("outdated");
    await page.getByLabel("Tell us more").fill("They changed their mark last year.");
    await page.getByRole("button", { name: "Send report" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("your report of github.com's logo is in the queue");
    await accessible(page);
    const reports = page.getByRole("region", { name: "Your reports" }).first();
    expect(await reports.textContent()).toContain("Waiting for an operator");

    const listed = await admin("reports", "list", "--open");
    expect(listed.status).toBe(0);
    const { items } = listed.json() as { items: { id: number; domain: string; reports: { message: string; via: string }[] }[] };
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ domain: "github.com", reports: [{ message: "They changed their mark last year.", via: "portal" }] });

    const replacement = join(projectRoot, "node_modules", "simple-icons", "icons", "gitlab.svg");
    const resolved = await admin(
      "reports",
      "resolve",
      String(items[0]!.id),
      "--action",
      "replace",
      "--file",
      replacement,
      "--note",
      "New mark in place",
    );
    expect(resolved.status, resolved.stderr).toBe(0);

    await page.reload();
    expect(await page.getByRole("region", { name: "Your reports" }).first().textContent()).toContain("New mark in place");
    expect(await page.getByRole("region", { name: "Your reports" }).first().textContent()).not.toContain("Waiting for an operator");
  });
});
