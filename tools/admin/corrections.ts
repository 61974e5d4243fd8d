import { existsSync, readFileSync, statSync } from "node:fs";
import { reportActions } from "../../schema";
import { closeItem, listReports, openItem, replaceReportedLogo } from "../../src/corrections/reports";
import { addTakedown, listTakedowns, removeTakedown } from "../../src/corrections/takedowns";
import type { Db } from "../../src/lib/db";
import { normaliseDomain, registrableDomain } from "../../src/lib/domain";
import { sha256Hex } from "../../src/lib/encoding";
import { fail, ok, type Result } from "../../src/lib/errors";
import { requestPurge } from "../../src/purge/journal";
import { parseCommandLine, storageOptions, UsageError, wholeNumber } from "../args";
import { askDiscoveryWorker } from "../discovery/runner";
import { prepareLogo } from "../importer/prepare";
import type { Platform } from "../platform";

/**
 * Operator commands of logos put right (docs/corrections.md):
 *   reports list [--open] [--domain D]      the queue: one item per logo, its reports and who sent them
 *   reports resolve ID --action rediscover|forget|replace --file F|dismiss [--note N]
 *                                           act on an item and close it; its reporters see the note
 *   takedown add --domain D --reason R      stop serving the domain's logos on every surface
 *   takedown remove --domain D | list
 *   purge --domain D                        drop every cached answer about the domain, everywhere
 * Each writes D1 (and R2) directly, as every admin command does; the running Worker's isolates
 * follow the purge journal these write to within ten seconds (src/purge/purge.ts).
 */
type Storage = { remote: boolean; persistTo: string | undefined };
type Run = (db: Db, platform: Platform) => Promise<Result<unknown>>;

const storageOf = (values: { remote: boolean; "persist-to"?: string | undefined }): Storage => ({
  remote: values.remote,
  persistTo: values["persist-to"],
});

function noPositionals(positionals: string[]) {
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
}

function domainOption(value: string | undefined): string {
  if (!value) throw new UsageError("--domain is required");
  if (!normaliseDomain(value).ok) throw new UsageError(`--domain ${value} is not a domain name`);
  return value;
}

/** An operator's replacement file, prepared as an import's is (SVG sanitised, sizes bounded). */
const MAX_REPLACEMENT_BYTES = 32 * 1024 * 1024;

// Typed where they are registered (./commands.ts), which this file does not import.
export const correctionCommands = {
  "reports list": {
    usage: "reports list [--open] [--domain D]",
    parse(args: string[]) {
      const { values, positionals } = parseCommandLine(args, {
        ...storageOptions,
        open: { type: "boolean", default: false },
        domain: { type: "string" },
      });
      noPositionals(positionals);
      const domain = values.domain === undefined ? undefined : domainOption(values.domain);
      const run: Run = (db) => listReports(db, { open: values.open, domain });
      return { storage: storageOf(values), run };
    },
  },
  "reports resolve": {
    usage: `reports resolve ID --action ${reportActions.join("|")} [--file F] [--note N]`,
    parse(args: string[]) {
      const { values, positionals } = parseCommandLine(args, {
        ...storageOptions,
        action: { type: "string" },
        file: { type: "string" },
        note: { type: "string" },
      });
      if (positionals.length !== 1) throw new UsageError("name one report: reports resolve ID --action …");
      const id = wholeNumber(positionals[0]!, "ID must be a report's id (a positive whole number)", 1, Number.MAX_SAFE_INTEGER);
      const action = values.action;
      if (!action || !(reportActions as readonly string[]).includes(action))
        throw new UsageError(`--action must be one of ${reportActions.join(", ")}`);
      if (action === "replace" && !values.file) throw new UsageError("--action replace needs --file F, the logo to serve instead");
      if (action !== "replace" && values.file) throw new UsageError("--file goes with --action replace only");
      if (values.file && !(existsSync(values.file) && statSync(values.file).isFile()))
        throw new UsageError(`--file ${values.file}: no such file`);
      if (values.file && statSync(values.file).size > MAX_REPLACEMENT_BYTES)
        throw new UsageError(`--file ${values.file} is larger than 32 MB`);
      if (values.note !== undefined && values.note.length > 1000) throw new UsageError("--note must be at most 1000 characters");
      const storage = storageOf(values);
      const run: Run = async (db, platform) => {
        const item = await openItem(db, id);
        if (!item.ok) return item;
        const domain = item.value.domain;
        let done: unknown = null;
        if (action === "replace") {
          const bytes = new Uint8Array(readFileSync(values.file!));
          const prepared = await prepareLogo(bytes);
          if (!prepared.ok) return fail("invalid_argument", `--file ${values.file}: ${prepared.error}`);
          const replaced = await replaceReportedLogo(db, platform.bucket, item.value, prepared.logo, await sha256Hex(bytes));
          if (!replaced.ok) return replaced;
          done = replaced.value;
        } else if (action === "rediscover" || action === "forget") {
          const discovered = await askDiscoveryWorker<unknown>(storage, action === "rediscover" ? "/discover" : "/forget", {
            domain: registrableDomain(domain) ?? domain,
          });
          if (!discovered.ok) return discovered;
          done = discovered.value;
        }
        const closed = await closeItem(db, item.value, action as (typeof reportActions)[number], values.note);
        return closed.ok ? ok({ ...closed.value, done }) : closed;
      };
      return { storage, run };
    },
  },
  "takedown add": {
    usage: "takedown add --domain D --reason R",
    parse(args: string[]) {
      const { values, positionals } = parseCommandLine(args, { ...storageOptions, domain: { type: "string" }, reason: { type: "string" } });
      noPositionals(positionals);
      const domain = domainOption(values.domain);
      if (!values.reason?.trim()) throw new UsageError("--reason is required: lookups answer it with the 451");
      const reason = values.reason;
      const run: Run = (db) => addTakedown(db, domain, reason);
      return { storage: storageOf(values), run };
    },
  },
  "takedown remove": {
    usage: "takedown remove --domain D",
    parse(args: string[]) {
      const { values, positionals } = parseCommandLine(args, { ...storageOptions, domain: { type: "string" } });
      noPositionals(positionals);
      const domain = domainOption(values.domain);
      const run: Run = (db) => removeTakedown(db, domain);
      return { storage: storageOf(values), run };
    },
  },
  "takedown list": {
    usage: "takedown list",
    parse(args: string[]) {
      const { values, positionals } = parseCommandLine(args, { ...storageOptions });
      noPositionals(positionals);
      const run: Run = (db) => listTakedowns(db);
      return { storage: storageOf(values), run };
    },
  },
  purge: {
    usage: "purge --domain D",
    parse(args: string[]) {
      const { values, positionals } = parseCommandLine(args, { ...storageOptions, domain: { type: "string" } });
      noPositionals(positionals);
      const host = normaliseDomain(domainOption(values.domain));
      const domain = host.ok ? host.domain : "";
      const domains = [...new Set([domain, registrableDomain(domain) ?? domain])];
      const run: Run = async (db) => {
        const ids = await requestPurge(db, domains);
        return ok({ domains, journal: ids, followedWithinSeconds: 10 });
      };
      return { storage: storageOf(values), run };
    },
  },
};
