import { plans } from "../../schema";
import { createAccount, deleteAccount, setMcpAccess, setPassword, setPlan } from "../../src/accounts/accounts";
import { stillChargeable, stripeCustomerOf } from "../../src/billing/checkouts";
import type { Db } from "../../src/lib/db";
import type { Result } from "../../src/lib/errors";
import { createKey, revokeKey } from "../../src/keys/apiKeys";
import { type CommandIo, parseCommandLine, passwordOf, passwordOptions, storageOptions, UsageError, wholeNumber } from "../args";
import type { Platform } from "../platform";
import { correctionCommands } from "./corrections";
import { discoveryCommands } from "./discovery";

/**
 * Operator commands. Each parses and checks its arguments before touching storage, so a
 * mistake writes nothing; then it runs one catalogue function and returns its result.
 */
export interface Command {
  usage: string;
  /** Parses argv (and reads a password from `io`, where it takes one) into a job to run against the database, or throws UsageError. */
  parse(args: string[], io: CommandIo): Job | Promise<Job>;
}
interface Job {
  storage: { remote: boolean; persistTo?: string | undefined };
  /** The work, on the platform's database (and, for the few that write objects, its bucket). */
  run: (db: Db, platform: Platform) => Promise<Result<unknown>>;
}

const storage = (values: { remote: boolean; "persist-to"?: string | undefined }) => ({
  remote: values.remote,
  persistTo: values["persist-to"],
});

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== "string" || value === "") throw new UsageError(`--${name} is required`);
  return value;
}

function noPositionals(positionals: string[]) {
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
}

export const commands: Record<string, Command> = {
  "account create": {
    usage: `account create --email E [--password-stdin] [--plan ${plans.join("|")}]`,
    async parse(args, io) {
      const { values, positionals } = parseCommandLine(args, {
        ...storageOptions,
        ...passwordOptions,
        email: { type: "string" },
        plan: { type: "string", default: "free" },
      });
      noPositionals(positionals);
      const email = required(values, "email");
      // Checked before the password is asked for, so that nobody types it twice for nothing.
      if (!(plans as readonly string[]).includes(values.plan)) throw new UsageError(`--plan must be one of ${plans.join(", ")}`);
      // An operator vouches for the address: the account has its plan's discovery budget at once.
      const input = { email, password: await passwordOf(values, io), plan: values.plan as never, emailConfirmed: true };
      return { storage: storage(values), run: (db) => createAccount(db, input) };
    },
  },
  "account plan": {
    usage: `account plan --account ID --plan ${plans.join("|")}`,
    parse(args) {
      const { values, positionals } = parseCommandLine(args, {
        ...storageOptions,
        account: { type: "string" },
        plan: { type: "string" },
      });
      noPositionals(positionals);
      const account = required(values, "account");
      const plan = required(values, "plan");
      if (!(plans as readonly string[]).includes(plan)) throw new UsageError(`--plan must be one of ${plans.join(", ")}`);
      return { storage: storage(values), run: (db) => setPlan(db, account, plan) };
    },
  },
  "account password": {
    usage: "account password --account ID [--password-stdin]",
    async parse(args, io) {
      const { values, positionals } = parseCommandLine(args, { ...storageOptions, ...passwordOptions, account: { type: "string" } });
      noPositionals(positionals);
      const account = required(values, "account");
      const password = await passwordOf(values, io);
      return { storage: storage(values), run: (db) => setPassword(db, account, password) };
    },
  },
  "account delete": {
    usage: "account delete --account ID",
    parse(args) {
      const { values, positionals } = parseCommandLine(args, { ...storageOptions, account: { type: "string" } });
      noPositionals(positionals);
      const account = required(values, "account");
      return {
        storage: storage(values),
        async run(db) {
          // Read first: the billing row goes with the account, and Stripe keeps the customer.
          const stripeCustomerId = await stripeCustomerOf(db, account);
          const deleted = await deleteAccount(db, account, stillChargeable(account));
          return deleted.ok ? { ...deleted, value: { ...deleted.value, stripeCustomerId } } : deleted;
        },
      };
    },
  },
  "account mcp": {
    usage: "account mcp --account ID --access on|off",
    parse(args) {
      const { values, positionals } = parseCommandLine(args, {
        ...storageOptions,
        account: { type: "string" },
        access: { type: "string" },
      });
      noPositionals(positionals);
      const account = required(values, "account");
      const access = required(values, "access");
      if (access !== "on" && access !== "off") throw new UsageError("--access must be on or off");
      return { storage: storage(values), run: (db) => setMcpAccess(db, account, access === "on") };
    },
  },
  "key create": {
    usage: "key create --account ID --type publishable|secret [--allowed-origin URL]... [--require-attribution] [--per-minute N]",
    parse(args) {
      const { values, positionals } = parseCommandLine(args, {
        ...storageOptions,
        account: { type: "string" },
        type: { type: "string" },
        "allowed-origin": { type: "string", multiple: true },
        "require-attribution": { type: "boolean", default: false },
        "per-minute": { type: "string" },
      });
      noPositionals(positionals);
      const type = required(values, "type");
      if (type !== "publishable" && type !== "secret") throw new UsageError("--type must be publishable or secret");
      const perMinuteText = values["per-minute"];
      const perMinute =
        perMinuteText === undefined
          ? undefined
          : wholeNumber(perMinuteText, "--per-minute must be a positive whole number", 1, Number.MAX_SAFE_INTEGER);
      const input = {
        accountId: required(values, "account"),
        type,
        allowedOrigins: values["allowed-origin"] ?? [],
        requireAttribution: values["require-attribution"],
        perMinute,
      } as const;
      return { storage: storage(values), run: (db) => createKey(db, input) };
    },
  },
  "key revoke": {
    usage: "key revoke --key KEY",
    parse(args) {
      const { values, positionals } = parseCommandLine(args, { ...storageOptions, key: { type: "string" } });
      noPositionals(positionals);
      const key = required(values, "key");
      return { storage: storage(values), run: (db) => revokeKey(db, key) };
    },
  },
  ...discoveryCommands,
  ...correctionCommands,
};
