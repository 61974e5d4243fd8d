import { reset } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, afterEach, beforeAll, beforeEach, expect, vi } from "vitest";
import { clearIsolateCaches } from "../../src/lib/isolateCaches";
import { forgetJournalPosition } from "../../src/purge/purge";
import { checkRefusedFetches, installOutboundGuard } from "./outboundGuard";
import { emptyDatabase } from "./storage";

/**
 * Setup of every worker test file. The files share one runtime and one isolate (vitest.config.ts),
 * so what one leaves behind is handed back here:
 *
 *  - before each test, storage is empty (storage.ts): `reset()` deletes every Durable Object, and
 *    with them D1, KV, R2, the Cache API and the rate-limiting binding's counters (Miniflare keeps
 *    each in Durable Objects); D1 gets back the database migrations/ makes, applied once per
 *    runtime and replayed in one batch. Uploads to the fake file API are forgotten too;
 *  - after each test, the real clock is back (clock.ts), and a fetch to anything but a fake
 *    fails the test (outboundGuard.ts);
 *  - before each file, the isolate's caches are emptied; after it, the fake websites it claimed
 *    are handed back, so that no file, nor a property's shrinking, can use up those of the next.
 */
installOutboundGuard(() => expect.getState().currentTestName);

beforeAll(() => {
  clearIsolateCaches();
});

beforeEach(async () => {
  await reset();
  await Promise.all([emptyDatabase(), fetch(`${env.ANTHROPIC_BASE_URL}/_uploads`, { method: "DELETE" })]);
  // The purge journal starts again with the database: this isolate's place in the old one means nothing.
  forgetJournalPosition();
});

afterEach(() => {
  vi.useRealTimers();
  checkRefusedFetches();
});

afterAll(async () => {
  await fetch(`${env.DISCOVERY_FAKE_SITES}/release`, { method: "POST" });
});
