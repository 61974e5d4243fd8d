import { lookupFallbacks } from "../../schema";
import { setKeyFallback } from "../../src/keys/apiKeys";
import type { Db } from "../../src/lib/db";
import { parseCommandLine, storageOptions, UsageError } from "../args";
import { askDiscoveryWorker } from "../discovery/runner";

/**
 * Operator commands of icon discovery and the lookup fallback:
 *   discover --domain D        run discovery now (whatever is cached or remembered) and print
 *                              what it chose and why: every candidate with its score
 *   logo forget --domain D     remove D's discovered logo and its objects, and its remembered
 *                              miss, so the next lookup discovers again
 *   key fallback --key K --fallback monogram|none
 *                              what the key's lookups answer for a domain without a logo
 */
function domainJob(args: string[]) {
  const { values, positionals } = parseCommandLine(args, { ...storageOptions, domain: { type: "string" } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (!values.domain) throw new UsageError("--domain is required");
  return { storage: { remote: values.remote, persistTo: values["persist-to"] }, domain: values.domain };
}

// Typed where they are registered (./commands.ts), which this file does not import.
export const discoveryCommands = {
  discover: {
    usage: "discover --domain D",
    parse(args: string[]) {
      const { storage, domain } = domainJob(args);
      return { storage, run: () => askDiscoveryWorker(storage, "/discover", { domain }) };
    },
  },
  "logo forget": {
    usage: "logo forget --domain D",
    parse(args: string[]) {
      const { storage, domain } = domainJob(args);
      return { storage, run: () => askDiscoveryWorker(storage, "/forget", { domain }) };
    },
  },
  "key fallback": {
    usage: `key fallback --key KEY --fallback ${[...lookupFallbacks, "none"].join("|")}`,
    parse(args: string[]) {
      const { values, positionals } = parseCommandLine(args, { ...storageOptions, key: { type: "string" }, fallback: { type: "string" } });
      if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
      if (!values.key) throw new UsageError("--key is required");
      const fallback = values.fallback;
      if (fallback !== "none" && !(lookupFallbacks as readonly string[]).includes(fallback ?? "")) {
        throw new UsageError(`--fallback must be one of ${[...lookupFallbacks, "none"].join(", ")}`);
      }
      const key = values.key;
      return {
        storage: { remote: values.remote, persistTo: values["persist-to"] },
        run: (db: Db) => setKeyFallback(db, key, fallback === "none" ? null : (fallback as (typeof lookupFallbacks)[number])),
      };
    },
  },
};
