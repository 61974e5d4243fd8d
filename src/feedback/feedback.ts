import { and, count, eq, sql } from "drizzle-orm";
import { type FeedbackCategory, feedback } from "../../schema";
import type { Db } from "../lib/db";
import { fail, ok, type Result } from "../lib/errors";
import { windowStart } from "../limits/periods";

/** Spec "Other limits": 5 submissions per client per UTC calendar day. */
export const DAILY_FEEDBACK_LIMIT = 5;

export interface FeedbackInput {
  accountId: string;
  clientId: string;
  oauthClientId: string | null;
  category: FeedbackCategory;
  message: string;
  domain?: string;
  logoId?: number;
  tool?: string;
}

export interface FeedbackReceipt {
  remaining: number;
  /** `fb-<created at, Unix ms>-<row id>`. */
  referenceId: string;
  timestamp: string;
}

/**
 * Stores one submission unless the client has reached today's limit. The check and the insert
 * are one statement, and the count that follows runs in the same transaction, so concurrent
 * submissions can never get a sixth row in.
 */
export async function submitFeedback(db: Db, input: FeedbackInput, now = Date.now()): Promise<Result<FeedbackReceipt>> {
  const day = windowStart("day", now);
  const [inserted, [counted]] = await db.batch([
    db.all<{ id: number }>(sql`
      INSERT INTO ${feedback} (account_id, client_id, oauth_client_id, day, category, message, domain, logo_id, tool, created_at)
      SELECT ${input.accountId}, ${input.clientId}, ${input.oauthClientId}, ${day}, ${input.category}, ${input.message},
             ${input.domain ?? null}, ${input.logoId ?? null}, ${input.tool ?? null}, ${now}
      WHERE (SELECT count(*) FROM ${feedback} WHERE client_id = ${input.clientId} AND day = ${day}) < ${DAILY_FEEDBACK_LIMIT}
      RETURNING id`),
    db.select({ n: count() }).from(feedback).where(and(eq(feedback.clientId, input.clientId), eq(feedback.day, day))),
  ]);
  const row = inserted[0];
  if (!row) return fail("rate_limited", `Daily feedback limit (${DAILY_FEEDBACK_LIMIT}) exceeded. Try again tomorrow.`);
  return ok({
    remaining: Math.max(0, DAILY_FEEDBACK_LIMIT - (counted?.n ?? DAILY_FEEDBACK_LIMIT)),
    referenceId: `fb-${now}-${row.id}`,
    timestamp: new Date(now).toISOString(),
  });
}
