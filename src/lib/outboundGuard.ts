import { AsyncLocalStorage } from "node:async_hooks";
import { log } from "./log";
import { strangerUrlProblem, type UrlPolicy } from "./strangerUrls";

/**
 * The outbound hook for code the service does not write: the OAuth library fetches what a
 * client names (its `client_id` metadata document, the `jwks_uri` in it) with the global
 * `fetch`, and offers no option to check a URL first. Work run through `guardedOutbound` has
 * every global fetch it makes checked against the policy (src/lib/strangerUrls.ts) before any
 * connection is opened; a refused one rejects as a network failure would, which the library
 * reports as a client it could not verify. Fetches outside such work are untouched.
 *
 * workerd has no hook of its own for a Worker's outbound requests, so this one wraps the
 * global fetch once (on first use) and asks an AsyncLocalStorage which policy, if any, the
 * calling work runs under: concurrent requests of an isolate each keep their own.
 */
const scope = new AsyncLocalStorage<UrlPolicy>();
/** Marks the wrapper, so that it is put back if something (a test's spy) replaced it since. */
const GUARD = Symbol("outboundGuard");

/** Fetches this isolate refused, for tests and the logs. */
export const refusedOutbound = { count: 0 };

function install(): void {
  if ((globalThis.fetch as typeof fetch & { [GUARD]?: true })[GUARD]) return;
  const original = globalThis.fetch;
  const guarded = ((input: RequestInfo | URL, init?: RequestInit) => {
    const policy = scope.getStore();
    if (policy) {
      const url = input instanceof Request ? input.url : String(input);
      const problem = strangerUrlProblem(url, policy);
      if (problem !== null) {
        refusedOutbound.count++;
        log.warn("outbound.refused", { policy: policy.name, reason: problem });
        return Promise.reject(new TypeError(`fetch refused: ${problem}`));
      }
    }
    return original(input, init);
  }) as typeof fetch & { [GUARD]?: true };
  guarded[GUARD] = true;
  globalThis.fetch = guarded;
}

/** Runs `work` with every global fetch it makes checked against `policy` first. */
export function guardedOutbound<T>(policy: UrlPolicy, work: () => T): T {
  install();
  return scope.run(policy, work);
}

/** An object whose methods all run as guardedOutbound work (the OAuth library's helpers). */
export function guardedMethods<T extends object>(policy: UrlPolicy, target: T): T {
  return new Proxy(target, {
    get(object, name, receiver) {
      const value = Reflect.get(object, name, receiver);
      return typeof value === "function"
        ? (...args: unknown[]) => guardedOutbound(policy, () => (value as (...a: unknown[]) => unknown).apply(object, args))
        : value;
    },
  });
}
