/**
 * The worker tests are offline by construction. The Worker, its Durable Objects, its queue
 * consumer and the tests share one isolate, so every `fetch()` any of them makes goes through
 * the global installed here: a loopback address (the fake websites, Stripe and the file API,
 * all on 127.0.0.1) is fetched; anything else is refused at once, without a DNS lookup or a
 * packet, and recorded. The setup file (setup.ts) fails the test during which a refused fetch
 * was made, naming the URL, unless the test said it expects them (`expectRefusedFetches`).
 *
 * A discovery of a host no fake site is mapped to (DISCOVERY_RESOLVE) is such a fetch: a test
 * that looks up a domain nobody knows claims an empty fake site for it (`emptySite`).
 */
const GUARD = Symbol.for("logo-lookup.test.outboundGuard");

interface Refused {
  url: string;
  test: string | undefined;
}

interface Guard {
  refused: Refused[];
  expecting: boolean;
  currentTest: () => string | undefined;
}

const LOOPBACK = /^(127(?:\.\d{1,3}){3}|\[::1\]|localhost)$/;

/** Whether `url` may leave the isolate: loopback only. */
export function reachable(url: URL): boolean {
  return LOOPBACK.test(url.hostname);
}

/** Installs the guard once per isolate; later calls (one per test file) find it in place. */
export function installOutboundGuard(currentTest: () => string | undefined): void {
  const scope = globalThis as typeof globalThis & { [GUARD]?: Guard };
  if (scope[GUARD]) {
    scope[GUARD].currentTest = currentTest;
    return;
  }
  const guard: Guard = { refused: [], expecting: false, currentTest };
  scope[GUARD] = guard;
  const realFetch = globalThis.fetch.bind(globalThis);
  globalThis.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
    const raw = input instanceof Request ? input.url : String(input);
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return realFetch(input, init);
    }
    if (reachable(url)) return realFetch(input, init);
    guard.refused.push({ url: url.href, test: guard.currentTest() });
    return Promise.reject(new TypeError(`outbound guard: ${url.href} refused (only loopback addresses are reachable in tests)`));
  };
}

function guard(): Guard {
  const found = (globalThis as typeof globalThis & { [GUARD]?: Guard })[GUARD];
  if (!found) throw new Error("the outbound guard is not installed (test/helpers/setup.ts)");
  return found;
}

/**
 * For a test that makes the Worker fetch hosts no test maps on purpose (a property whose
 * random domains may be real names, or the guard's own test): they are still refused, and
 * `refusedFetches()` tells what they were, but they do not fail the test.
 */
export function expectRefusedFetches(): void {
  guard().expecting = true;
}

/** The fetches refused since the last call, oldest first. */
export function refusedFetches(): Refused[] {
  const found = guard();
  return found.refused.splice(0);
}

/** Called by the setup file after each test: throws when the test made fetches it did not expect. */
export function checkRefusedFetches(): void {
  const found = guard();
  const refused = found.refused.splice(0);
  const expecting = found.expecting;
  found.expecting = false;
  if (refused.length === 0 || expecting) return;
  const lines = refused.map((r) => `  ${r.url}${r.test ? ` (during "${r.test}")` : ""}`);
  throw new Error(
    `outbound guard: the test made ${refused.length} fetch(es) to addresses no fake serves; tests never reach the internet:\n${lines.join("\n")}\n` +
      "A lookup of a domain nobody knows needs a fake site of its own (emptySite in test/discovery/helpers.ts).",
  );
}
