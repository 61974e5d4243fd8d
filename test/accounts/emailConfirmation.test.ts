import { env, exports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { accounts } from "../../schema";
import { confirmationToken, sendConfirmation } from "../../src/accounts/emailConfirmation";
import { db } from "../helpers/catalogue";
import { BASE, signedUp, textOf } from "../web/helpers";

/**
 * Sign-up mails a link that confirms the address, through the mail API (Postmark's wire format,
 * faked on 127.0.0.1: test/fakes/mailApi.ts); until it is opened the account discovers 20
 * domains a day instead of its plan's 500.
 */
interface SentMail {
  From: string;
  To: string;
  Subject: string;
  TextBody: string;
}

async function mailsTo(address: string): Promise<SentMail[]> {
  return (await (await fetch(`${env.MAIL_API_BASE}/_messages?to=${encodeURIComponent(address)}`)).json()) as SentMail[];
}

const linkIn = (mail: SentMail) => /https?:\/\/\S+\/portal\/confirm-email\?token=\S+/.exec(mail.TextBody)?.[0];

const confirmedAt = async (email: string) =>
  (await db.query.accounts.findFirst({ where: eq(accounts.email, email), columns: { emailConfirmedAt: true } }))?.emailConfirmedAt;

describe("email confirmation", () => {
  it("sign-up mails a link; until it is opened the dashboard says so and counts 20 discoveries a day, then the plan's 500", async () => {
    const { browser, email } = await signedUp();
    const [mail, ...more] = await mailsTo(email);
    expect(more).toEqual([]);
    expect(mail).toMatchObject({ From: env.MAIL_FROM, To: email, Subject: "Confirm your email address" });
    const link = linkIn(mail!);
    expect(link).toBeDefined();
    expect(await confirmedAt(email)).toBeNull();

    const before = await textOf(await browser.fetch("/portal"));
    expect(before).toContain("Confirm your email address");
    expect(before).toContain("Sites fetched for domains the catalogue did not know: 20 a day");

    const confirmed = await browser.fetch(new URL(link!).pathname + new URL(link!).search);
    expect(confirmed.status).toBe(200);
    expect(await textOf(confirmed)).toContain("Email address confirmed");
    expect(await confirmedAt(email)).toBeInstanceOf(Date);

    const after = await textOf(await browser.fetch("/portal"));
    expect(after).not.toContain("Confirm your email address");
    expect(after).toContain("Sites fetched for domains the catalogue did not know: 500 a day");
    // A second opening changes nothing and says so.
    expect(await textOf(await browser.fetch(new URL(link!).pathname + new URL(link!).search))).toContain("confirmed already");
  });

  it("the dashboard mails the link again, a few times a day at most", async () => {
    const { browser, email } = await signedUp();
    const again = await browser.postForm("/portal/confirm-email/resend", {});
    expect(again.status).toBe(303);
    expect(again.headers.get("location")).toBe("/portal?confirmation=sent");
    expect(await mailsTo(email)).toHaveLength(2);
    for (let i = 0; i < 4; i++) await browser.postForm("/portal/confirm-email/resend", {});
    const refused = await browser.postForm("/portal/confirm-email/resend", {});
    expect(refused.status).toBe(429);
    expect(await mailsTo(email)).toHaveLength(6);
  });
});

describe("without a mail API (a local server)", () => {
  it("writes the link to the console instead, where npm start shows it", async () => {
    const lines: string[] = [];
    const spy = vi.spyOn(console, "log").mockImplementation((line: unknown) => void lines.push(String(line)));
    try {
      const local = { ...env, MAIL_API_TOKEN: undefined } as Env;
      const sent = await sendConfirmation(local, { id: crypto.randomUUID(), email: "local@example.com" }, "http://localhost:8787");
      expect(sent).toEqual({ ok: true, value: { sent: "log" } });
    } finally {
      spy.mockRestore();
    }
    expect(lines.join("\n")).toMatch(/Mail to local@example\.com[\s\S]*http:\/\/localhost:8787\/portal\/confirm-email\?token=/);
  });
});

describe("email confirmation refuses what it did not sign", () => {
  it.each([
    ["no token", ""],
    ["garbage", "not-a-token"],
    ["a forged signature", "forged"],
    ["a token for the address before it changed", "other-address"],
    ["an expired token", "expired"],
  ])("%s: a 400 page that says why, and nothing confirmed", async (_, kind) => {
    const { email } = await signedUp();
    const account = (await db.query.accounts.findFirst({ where: eq(accounts.email, email) }))!;
    const secret = env.SIGNED_URL_SECRET!;
    let token = kind;
    if (kind === "forged") token = `${(await confirmationToken(secret, account)).slice(0, -4)}AAAA`;
    if (kind === "other-address") token = await confirmationToken(secret, { id: account.id, email: `x${email}` });
    if (kind === "expired") token = await confirmationToken(secret, account, Date.now() - 8 * 24 * 3600 * 1000);
    // Opened in a browser that is not signed in.
    const response = await exports.default.fetch(`${BASE}/portal/confirm-email?token=${encodeURIComponent(token)}`);
    expect(response.status).toBe(400);
    const text = await textOf(response);
    expect(text).toMatch(kind === "expired" ? /has expired/ : /not valid/);
    expect(await confirmedAt(email)).toBeNull();
  });
});
