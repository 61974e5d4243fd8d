import { describe, expect, it } from "vitest";
import { DAILY_FEEDBACK_LIMIT, submitFeedback } from "../../src/feedback/feedback";
import { addAccount, db } from "../helpers/catalogue";

/** Spec "Other limits": 5 submissions per client per UTC calendar day. */
describe("the daily feedback limit", () => {
  const lastMoment = Date.parse("2025-01-01T23:59:59.999Z");
  const nextDay = Date.parse("2025-01-02T00:00:00.000Z");

  it("resets at midnight UTC, not a rolling 24 hours", async () => {
    const account = await addAccount();
    const input = { accountId: account.id, clientId: account.clientId, oauthClientId: null, category: "bug" as const, message: "late" };
    for (let i = 0; i < DAILY_FEEDBACK_LIMIT; i++) expect((await submitFeedback(db, input, lastMoment - i)).ok).toBe(true);
    expect(await submitFeedback(db, input, lastMoment)).toMatchObject({ ok: false, error: { code: "rate_limited" } });

    const first = await submitFeedback(db, input, nextDay);
    expect(first).toEqual({
      ok: true,
      value: {
        remaining: DAILY_FEEDBACK_LIMIT - 1,
        referenceId: expect.stringMatching(new RegExp(`^fb-${nextDay}-\\d+$`)),
        timestamp: "2025-01-02T00:00:00.000Z",
      },
    });
  });

  it("counts per client: another client of the same day has its own five", async () => {
    const one = await addAccount();
    const other = await addAccount();
    const of = (account: typeof one) => ({
      accountId: account.id,
      clientId: account.clientId,
      oauthClientId: null,
      category: "other" as const,
      message: "hi",
    });
    for (let i = 0; i < DAILY_FEEDBACK_LIMIT; i++) await submitFeedback(db, of(one), nextDay);
    expect((await submitFeedback(db, of(one), nextDay)).ok).toBe(false);
    expect(await submitFeedback(db, of(other), nextDay)).toMatchObject({ ok: true, value: { remaining: DAILY_FEEDBACK_LIMIT - 1 } });
  });
});
