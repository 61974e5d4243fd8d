import { DurableObject } from "cloudflare:workers";
import type { DiscoveryAsker } from "../limits/discoveryLimits";
import { type DiscoveryOutcome, runDiscovery } from "./run";
import { log } from "../lib/log";

/**
 * One object per domain under discovery: concurrent misses of one domain share the one
 * discovery in flight instead of each fetching the site. The object holds no storage: what a
 * discovery settles (a logo, a remembered miss) is in D1, where every lookup reads it.
 *
 * A caller waits at most its budget. When the discovery outlives it, the object puts one
 * message on the discovery queue; the queue's consumer calls back here with a long budget,
 * joining the discovery if it is still running, or starting it again if the object was
 * evicted meanwhile (a settled domain is never fetched twice: runDiscovery checks D1 first).
 *
 * Why an object rather than a claim row in D1: waiters join the running discovery's promise
 * and hear its outcome the moment it settles, with no polling and no stale claims to expire.
 */
export type CoordinatedOutcome = DiscoveryOutcome | { status: "pending" };

export interface DiscoveryMessage {
  domain: string;
  refresh: boolean;
}

/** The discovery in flight, and whom it was started for (none for the queue's and refreshes' calls). */
interface Running {
  outcome: Promise<DiscoveryOutcome>;
  asker: DiscoveryAsker | undefined;
}

/** Whether a discovery refused for `starter`'s spent budget is refused for `joiner` too: the same budget is spent. */
function sharesSpentBudget(outcome: DiscoveryOutcome, starter: DiscoveryAsker | undefined, joiner: DiscoveryAsker | undefined): boolean {
  if (outcome.status !== "nothing" || !outcome.budgetSpent) return true;
  if (outcome.budgetSpent.budget === "deployment") return true;
  if (outcome.budgetSpent.budget === "address") return starter?.address === joiner?.address;
  return starter?.accountId === joiner?.accountId;
}

export class DiscoveryCoordinator extends DurableObject<Env> {
  private running: Running | null = null;
  private queued = false;

  /**
   * `asker`: the account a lookup's discovery is counted against, when this call starts one
   * (runDiscovery charges it only past the catalogue's answer): joining the one running costs
   * nothing, and neither do the queue's and refreshes' calls, which have no asker.
   *
   * A discovery refused because the account (or the address) that started it had spent its
   * day's budget says nothing of the callers that joined it: each of those starts it again for
   * itself (or joins the one another joiner started), within what is left of its own budgets.
   * The deployment's budget spent is spent for everyone.
   */
  async discover(domain: string, options: { budgetMs: number; refresh?: boolean; asker?: DiscoveryAsker }): Promise<CoordinatedOutcome> {
    const refresh = options.refresh ?? false;
    const deadline = Date.now() + options.budgetMs;
    for (;;) {
      const run = this.running ?? this.start(domain, refresh, options.asker);
      const outcome = await settledWithin(run.outcome, deadline - Date.now());
      if (outcome === "pending") break;
      if (!sharesSpentBudget(outcome, run.asker, options.asker)) continue;
      return outcome;
    }
    if (!this.queued) {
      this.queued = true;
      try {
        await this.env.DISCOVERY_QUEUE.send({ domain, refresh } satisfies DiscoveryMessage);
      } catch (error) {
        // The next caller past its budget tries again.
        this.queued = false;
        log.error("discovery.not_queued", { domain, error });
      }
    }
    return { status: "pending" };
  }

  private start(domain: string, refresh: boolean, asker: DiscoveryAsker | undefined): Running {
    this.queued = false;
    const outcome = runDiscovery(this.env, domain, { refresh, asker })
      .catch((error): DiscoveryOutcome => {
        log.error("discovery.failed", { domain, error });
        return { status: "nothing", reason: "discovery failed", siteName: null, brandColor: null, missedUntil: null };
      })
      .finally(() => {
        this.running = null;
      });
    this.running = { outcome, asker };
    return this.running;
  }
}

/** The outcome, or "pending" when it has not settled within `budgetMs`. */
async function settledWithin(outcome: Promise<DiscoveryOutcome>, budgetMs: number): Promise<DiscoveryOutcome | "pending"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const budget = new Promise<"pending">((resolve) => {
    timer = setTimeout(() => resolve("pending"), Math.max(0, budgetMs));
  });
  try {
    return await Promise.race([outcome, budget]);
  } finally {
    clearTimeout(timer);
  }
}
