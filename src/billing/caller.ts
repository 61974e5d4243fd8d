import type { Context } from "hono";
import type { Plan } from "../../schema";
import type { AppEnv } from "../lib/context";
import { keyTypeOf, visiblePrefix } from "../keys/format";
import { verifyAskedKey } from "../keys/unknownKeys";
import type { Db } from "../lib/db";
import { bearerToken } from "../lib/responses";
import { currentSession } from "../accounts/browserSessions";

export interface BillingCaller {
  accountId: string;
  plan: Plan;
}

/**
 * Who is asking about billing: a signed-in portal session, or a server holding one of the
 * account's secret keys (`Authorization: Bearer sk_…`). Publishable keys never qualify.
 * "refused": the caller's address is past the limit on unknown keys.
 */
export async function billingCaller(c: Context<AppEnv>, db: Db): Promise<BillingCaller | null | "refused"> {
  const bearer = bearerToken(c.req.header("authorization"));
  if (bearer) {
    // An address sending made-up keys is refused as on the lookup (src/keys/unknownKeys.ts).
    if (keyTypeOf(bearer)) c.var.ctx.keyPrefix = visiblePrefix(bearer);
    const key = await verifyAskedKey(db, c.env, c.req.raw, bearer, c.var.ctx.defer);
    if (key === "refused") return key;
    return key && key.type === "secret" ? { accountId: key.accountId, plan: key.plan } : null;
  }
  const session = await currentSession(c, db);
  return session ? { accountId: session.id, plan: session.plan } : null;
}
