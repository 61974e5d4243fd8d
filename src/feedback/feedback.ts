import type { FeedbackCategory } from "../../schema";
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
  // Raw statements: an INSERT … SELECT … WHERE with RETURNING is not something drizzle's
  // builders batch. The column names are the ones schema/feedback.ts declares.
  const d1 = db.$client;
  const [inserted, counted] = await d1.batch<{ id?: number; n?: number }>([
    d1
      .prepare(
        `INSERT INTO feedback (account_id, client_id, oauth_client_id, day, category, message, domain, logo_id, tool, created_at)
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10
         WHERE (SELECT count(*) FROM feedback WHERE client_id = ?2 AND day = ?4) < ?11
         RETURNING id`,
      )
      .bind(
        input.accountId,
        input.clientId,
        input.oauthClientId,
        day,
        input.category,
        input.message,
        input.domain ?? null,
        input.logoId ?? null,
        input.tool ?? null,
        now,
        DAILY_FEEDBACK_LIMIT,
      ),
    d1.prepare("SELECT count(*) AS n FROM feedback WHERE client_id = ?1 AND day = ?2").bind(input.clientId, day),
  ]);
  const row = inserted?.results[0];
  const stored = counted?.results[0]?.n ?? DAILY_FEEDBACK_LIMIT;
  if (!row?.id) return fail("rate_limited", `Daily feedback limit (${DAILY_FEEDBACK_LIMIT}) exceeded. Try again tomorrow.`);
  return ok({
    remaining: Math.max(0, DAILY_FEEDBACK_LIMIT - stored),
    referenceId: `fb-${now}-${row.id}`,
    timestamp: new Date(now).toISOString(),
  });
}
