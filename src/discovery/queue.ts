import { z } from "zod";
import type { DiscoveryMessage } from "./coordinator";
import { askDiscovery } from "./coordinatorClient";
import { log } from "../lib/log";
import { MINUTE_MS } from "../lib/time";

/**
 * The discovery queue's consumer: discoveries that outlived a lookup's budget, and the
 * 30-day refreshes of discovered logos, finished in the background. Each message joins (or
 * restarts) the domain's discovery through its coordinator; one still running after
 * QUEUE_BUDGET_MS is retried later.
 */
const QUEUE_BUDGET_MS = MINUTE_MS;

const messageSchema = z.object({ domain: z.string().min(1).max(253), refresh: z.boolean().default(false) });

export async function consumeDiscoveries(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      const parsed = messageSchema.safeParse(message.body);
      if (!parsed.success) {
        log.error("discovery.queue_message_malformed");
        return message.ack();
      }
      const { domain, refresh }: DiscoveryMessage = parsed.data;
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
