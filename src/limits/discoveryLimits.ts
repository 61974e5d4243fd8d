import type { Plan } from "../../schema";
import type { Vars } from "../env";
import { asciiBytes, isolateCache, MAP_ENTRY_BYTES } from "../lib/isolateCaches";
import { planLimits } from "./plans";
import type { LimitWindow } from "./rateLimiter";
import { askLimiter, limiterNames } from "./rateLimiterClient";

/**
 * The budgets a discovery is counted against. Discovery makes the service fetch a stranger's
 * site, so three budgets must each have room before one starts, every UTC day:
 *
 *  - the account's: its plan's `discoveriesPerDay` once its email is confirmed (or it pays:
 *    Stripe has its address), DISCOVERY_UNCONFIRMED_PER_DAY until then, since an account costs
 *    nothing to make;
 *  - the address's the request came from (DISCOVERY_ADDRESS_PER_DAY), whatever Free accounts it
 *    uses: what one machine making accounts can get. A paying account is known to Stripe, and
 *    its requests may all come from one server (a secret key's) or one agent platform (MCP), so
 *    its discoveries count only against its own budget and the deployment's;
 *  - the deployment's (DISCOVERY_DEPLOYMENT_PER_DAY), whoever asks.
 *
 * A refusal is remembered by the isolate until its budget's day ends (`knownSpent`), so that a
 * lookup past a spent budget costs no Durable Object and no database read.
 */
export type DiscoveryBudget = "account" | "address" | "deployment";

/** Who asks for a discovery: an account as its key or token knows it, and the request's address. */
export interface DiscoveryRequester {
  accountId: string;
  plan: Plan;
  emailConfirmed: boolean;
  /** The request's address (limitedAddress), or null when it has none. */
  address: string | null;
}

/** Who a discovery is started for, and the budgets it is counted against (`discoveryAsker`). */
export interface DiscoveryAsker {
  accountId: string;
  /** The request's address (limitedAddress), or null when it has none (an operator's command). */
  address: string | null;
  accountPerDay: number;
  addressPerDay: number;
  deploymentPerDay: number;
}

/** Why a discovery was not started: the budget that was spent, and when its day ends (Unix ms). */
export interface SpentBudget {
  budget: DiscoveryBudget;
  resetAt: number;
}

export const DISCOVERY_COUNTER = "discovery";

/** The one window of a discovery budget: `limit` a UTC day. */
export const discoveryWindows = (limit: number): LimitWindow[] => [{ name: DISCOVERY_COUNTER, period: "day", limit }];

/** An account's discoveries a day: its plan's once its email is confirmed or it pays, a small budget until then. */
export function accountDiscoveriesPerDay(
  account: { plan: Plan; emailConfirmed: boolean },
  vars: Pick<Vars, "DISCOVERY_UNCONFIRMED_PER_DAY">,
): number {
  const planned = planLimits[account.plan].discoveriesPerDay;
  return account.emailConfirmed || account.plan !== "free" ? planned : Math.min(planned, vars.DISCOVERY_UNCONFIRMED_PER_DAY);
}

export function discoveryAsker(
  vars: Pick<Vars, "DISCOVERY_UNCONFIRMED_PER_DAY" | "DISCOVERY_ADDRESS_PER_DAY" | "DISCOVERY_DEPLOYMENT_PER_DAY">,
  requester: DiscoveryRequester,
): DiscoveryAsker {
  return {
    accountId: requester.accountId,
    address: requester.plan === "free" ? requester.address : null,
    accountPerDay: accountDiscoveriesPerDay(requester, vars),
    addressPerDay: vars.DISCOVERY_ADDRESS_PER_DAY,
    deploymentPerDay: vars.DISCOVERY_DEPLOYMENT_PER_DAY,
  };
}

// Keyed by the budget and its figure: an account whose figure changes (its email confirmed, its
// plan bought) is asked about afresh, not held to the refusal of its old figure.
const spentBudgets = isolateCache<string, number>({
  name: "discovery.spentBudgets",
  holds: "a discovery budget (account, address or deployment, with its figure) spent today, and when its day ends",
  capacity: 4_000,
  entryBytes: asciiBytes(80) + 8 + MAP_ENTRY_BYTES,
});

function budgetKeys(asker: DiscoveryAsker): Array<[DiscoveryBudget, string]> {
  const keys: Array<[DiscoveryBudget, string]> = [
    ["deployment", `deployment:${asker.deploymentPerDay}`],
    ["account", `account:${asker.accountId}:${asker.accountPerDay}`],
  ];
  if (asker.address !== null) keys.push(["address", `address:${asker.address}:${asker.addressPerDay}`]);
  return keys;
}

/** A budget of the asker's this isolate knows is spent for the day, or null: asks nothing of anyone. */
export function knownSpent(asker: DiscoveryAsker, now = Date.now()): SpentBudget | null {
  for (const [budget, key] of budgetKeys(asker)) {
    const resetAt = spentBudgets.get(key);
    if (resetAt === undefined) continue;
    if (resetAt > now) return { budget, resetAt };
    spentBudgets.delete(key);
  }
  return null;
}

/** Remembers in this isolate that one of the asker's budgets is spent until its day ends. */
export function rememberSpent(asker: DiscoveryAsker, spent: SpentBudget): void {
  const key = budgetKeys(asker).find(([budget]) => budget === spent.budget)?.[1];
  if (key !== undefined) spentBudgets.set(key, spent.resetAt);
}

/**
 * Counts one discovery the asker's request would start against each of its budgets; the
 * budget that refused it when one did, in which case no budget keeps the count. Throws
 * Unavailable when a limiter does not answer: the caller then starts nothing, as limits fail
 * closed.
 *
 * The address's and the deployment's budgets are leased first, together; the account's is
 * counted last, with its history (the dashboard's figure), and a refusal gives back what the
 * others had counted.
 */
export async function spendDiscovery(
  env: Pick<Env, "RATE_LIMITER">,
  asker: DiscoveryAsker,
  now = Date.now(),
): Promise<{ allowed: true } | ({ allowed: false } & SpentBudget)> {
  const shared: Array<{ budget: DiscoveryBudget; name: string; windows: LimitWindow[] }> = [
    { budget: "deployment", name: limiterNames.discoveryDeployment(), windows: discoveryWindows(asker.deploymentPerDay) },
  ];
  if (asker.address !== null)
    shared.push({ budget: "address", name: limiterNames.discoveryAddress(asker.address), windows: discoveryWindows(asker.addressPerDay) });
  const leases = await Promise.all(
    shared.map((each) =>
      askLimiter(env, each.name, (limiter) => limiter.lease(each.windows, 1, now)).then((decision) => ({ each, decision })),
    ),
  );
  const giveBack = () =>
    Promise.all(
      leases
        .filter(({ decision }) => decision.granted > 0)
        .map(({ each, decision }) => askLimiter(env, each.name, (limiter) => limiter.release(each.windows, 1, decision.starts))),
    );
  const refused = leases.find(({ decision }) => !decision.allowed);
  if (refused) {
    await giveBack();
    return { allowed: false, budget: refused.each.budget, resetAt: refused.decision.resetAt };
  }
  const account = await askLimiter(env, limiterNames.discovery(asker.accountId), (limiter) =>
    limiter.consume(discoveryWindows(asker.accountPerDay), 1, now, DISCOVERY_COUNTER),
  );
  if (!account.allowed) {
    await giveBack();
    return { allowed: false, budget: "account", resetAt: account.resetAt };
  }
  return { allowed: true };
}

/** The discoveries an account's requests started today, against its daily figure (accountDiscoveriesPerDay). */
export async function discoveryUsage(env: Pick<Env, "RATE_LIMITER">, accountId: string, perDay: number, now = Date.now()) {
  const [today] = await askLimiter(env, limiterNames.discovery(accountId), (limiter) => limiter.usage(discoveryWindows(perDay), now));
  return today!;
}
