import { z } from "zod";
import type { DiscoveryMessage } from "./coordinator";
import { askDiscovery } from "./coordinatorClient";
import { recheckDiscovered } from "./freshness";
import { log } from "../lib/log";
import { MINUTE_MS } from "../lib/time";

/**
 * The discovery queue's consumer: discoveries that outlived a lookup's budget, and the
 * 30-day refreshes of discovered logos, finished in the background. Each message joins (or
 * restarts) the domain's discovery through its coordinator; one still running after
 * QUEUE_BUDGET_MS is retried later.
 */
const QUEUE_BUDGET_MS = MINUTE_MS;

const messageSchema = z.object({
  domain: z.string().min(1).max(253),
  refresh: z.boolean().default(false),
  /** A scheduled re-check of a discovered icon (./freshness.ts): a conditional request, the site read only if it changed. */
  recheck: z.boolean().default(false),
});

export async function consumeDiscoveries(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      const parsed = messageSchema.safeParse(message.body);
      if (!parsed.success) {
        log.error("discovery.queue_message_malformed");
        return message.ack();
      }
      const { domain, refresh, recheck } = parsed.data;
      if (recheck) {
        try {
          const outcome = await recheckDiscovered(env, domain);
          log.info("discovery.recheck", { domain, outcome });
        } catch (error) {
          // The next run queues it again if it is still due; the 30-day refresh remains behind it.
          log.error("discovery.recheck_failed", { domain, error });
        }
        return message.ack();
      }
      try {
        const outcome = await askDiscovery(env, domain, { budgetMs: QUEUE_BUDGET_MS, refresh });
        if (outcome.status === "pending") message.retry();
        else message.ack();
      } catch (error) {
        log.error("discovery.queue_failed", { domain, error });
        message.retry();
      }
    }),
  );
}

/** Puts a discovered logo's refresh on the queue. */
export async function queueRefresh(env: Pick<Env, "DISCOVERY_QUEUE">, domain: string): Promise<void> {
  await env.DISCOVERY_QUEUE.send({ domain, refresh: true } satisfies DiscoveryMessage);
}
