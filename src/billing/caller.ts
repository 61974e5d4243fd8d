import type { Context } from "hono";
import type { Plan } from "../../schema";
import type { AppEnv } from "../env";
import { verifyKey } from "../keys/verify";
import type { Db } from "../lib/db";
import { bearerToken } from "../lib/responses";
import { currentSession } from "../portal/sessions";

export interface BillingCaller {
  accountId: string;
  plan: Plan;
}

/**
 * Who is asking about billing: a signed-in portal session, or a server holding one of the
 * account's secret keys (`Authorization: Bearer sk_…`). Publishable keys never qualify.
 */
export async function billingCaller(c: Context<AppEnv>, db: Db): Promise<BillingCaller | null> {
  const bearer = bearerToken(c.req.header("authorization"));
  if (bearer) {
    const key = await verifyKey(db, bearer);
    return key && key.type === "secret" ? { accountId: key.accountId, plan: key.plan } : null;
  }
  const session = await currentSession(c, db);
  return session ? { accountId: session.id, plan: session.plan } : null;
}
