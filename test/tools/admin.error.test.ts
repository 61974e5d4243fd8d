import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { accounts, apiKeys } from "../../schema";
import { runAdmin } from "../../tools/admin/run";
import { HiddenLine } from "../../tools/args";
import { type CommandResult, inProcess, platformForThisFile, tool } from "./helpers";

/** The admin CLI's refusals, on a state of their own so they run beside the other admin tests. */
const file = platformForThisFile();
beforeAll(async () => {
  const created = await admin("account", "create", "--email", "ops@example.com", "--password-stdin", "--plan", "launch");
  if (created.status !== 0) throw new Error(created.stderr);
});

// A password, where a command takes one, is piped in: the first line of standard input.
const admin = (...args: string[]) =>
  inProcess((io) => runAdmin([...args, "--persist-to", file.dir], io, file.platform.borrow), "correct horse battery\n");
const counts = async () => ({
  accounts: (await file.platform.db.select().from(accounts).all()).length,
  keys: (await file.platform.db.select().from(apiKeys).all()).length,
});
const errorOf = (result: CommandResult) =>
  JSON.parse(
    result.stderr
      .trim()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .at(-1)!,
  ).error;

describe("refuses bad arguments with a clear message, a non-zero exit and no write", () => {
  it.each([
    [["account", "create", "--password-stdin"], /--email is required/],
    [["account", "create", "--email", "bad", "--password-stdin"], /email/],
    [["account", "create", "--email", "x@example.com", "--password-stdin", "--plan", "gold"], /plan/],
    [["account", "create", "--email", "ops@example.com", "--password-stdin"], /already exists/],
    // Never as an argument, where shell history and the process list keep it.
    [
      ["account", "create", "--email", "x@example.com", "--password", "correct horse battery"],
      /not taken on the command line.*--password-stdin/,
    ],
    [["account", "password", "--account", "x", "--password", "correct horse battery"], /not taken on the command line/],
    [["account", "plan", "--account", "nobody", "--plan", "growth"], /No account/],
    [["account", "plan", "--plan", "growth"], /--account is required/],
    [["account", "password", "--account", "nobody", "--password-stdin"], /No account/],
    // No terminal to ask at, and nothing said to be piped in.
    [["account", "password", "--account", "nobody"], /asked for at a terminal.*--password-stdin/],
    [["key", "create", "--account", "nobody", "--type", "publishable"], /No account/],
    [["key", "create", "--type", "public", "--account", "x"], /--type must be publishable or secret/],
    [["key", "create", "--type", "secret", "--account", "x", "--per-minute", "ten"], /--per-minute must be a positive whole number/],
    // Decimal digits only: a number parser would read these as 16, 1000, 7 and 1.
    [["key", "create", "--type", "secret", "--account", "x", "--per-minute", "0x10"], /--per-minute must be a positive whole number/],
    [["key", "create", "--type", "secret", "--account", "x", "--per-minute", "1e3"], /--per-minute must be a positive whole number/],
    [["key", "create", "--type", "secret", "--account", "x", "--per-minute", " 7 "], /--per-minute must be a positive whole number/],
    [["key", "create", "--type", "secret", "--account", "x", "--per-minute", "1.0"], /--per-minute must be a positive whole number/],
    // A command pasted twice, or an option repeated, must not quietly take the last value.
    [["account", "plan", "--account", "x", "--plan", "growth", "--plan", "free"], /--plan is given more than once/],
    [["key", "create", "--type", "publishable", "--account", "x", "--allowed-origin", "https://x.com/path"], /./],
    [["account", "mcp", "--account", "x", "--access", "maybe"], /--access must be on or off/],
    [["key", "revoke", "--key", "pk_nope"], /Not an API key/],
    [["key", "revoke", "--key", `sk_${"Z".repeat(32)}`], /No such key/],
    [["key", "create", "--bogus"], /Unknown option/],
    [["account", "rename"], /unknown command/],
    [["account", "delete", "--account", "nobody"], /No account/],
    [["account", "delete"], /--account is required/],
    // Named by its word, whatever options follow and in whichever order: parsed as options.
    [["discover", "--remote", "--domain", "acme.com", "--bogus"], /Unknown option '--bogus'/],
    [["discover", "--domain=acme.com", "extra"], /unexpected argument "extra"/],
    [[], /usage/],
  ])("%j", async (args, message) => {
    const before = await counts();
    const result = await admin(...args);
    expect(result.status).not.toBe(0);
    expect(result.stdout).toBe("");
    expect(errorOf(result).message).toMatch(message);
    expect(await counts()).toEqual(before);
  });
});

describe("storage options", () => {
  it("may come before the command's words too", async () => {
    const result = await inProcess(
      (io) =>
        runAdmin(
          ["--persist-to", file.dir, "account", "create", "--email", "early@example.com", "--password-stdin"],
          io,
          file.platform.borrow,
        ),
      "correct horse battery\n",
    );
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ email: "early@example.com" });
  });
});

describe("exit codes", () => {
  it("2 for a usage mistake, with the error as JSON on stderr and nothing on stdout", async () => {
    const result = await admin("key", "create", "--type", "public", "--account", "x");
    expect(result.status).toBe(2);
    expect(result.stdout).toBe("");
    expect(errorOf(result)).toMatchObject({
      code: "invalid_argument",
      message: expect.stringMatching(/--type must be publishable or secret/),
    });
  });

  it("1 when the storage refuses, as a process, writing nothing", async () => {
    const before = await counts();
    const result = await tool("admin", ["key", "create", "--account", "nobody", "--type", "publishable"], file.dir);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    expect(errorOf(result).message).toMatch(/No account/);
    expect(await counts()).toEqual(before);
  });
});

describe("a state with no catalogue", () => {
  it("is named as such, in the database's words, never a query; an empty --persist-to is refused before anything opens", async () => {
    const empty = mkdtempSync(join(tmpdir(), "logo-lookup-empty-"));
    try {
      const result = await inProcess((io) =>
        runAdmin(["account", "plan", "--account", "acc_1", "--plan", "growth", "--persist-to", empty], io),
      );
      expect(result.status).toBe(1);
      expect(errorOf(result).message).toMatch(/no such table: accounts.*no catalogue in this state \(run npm start once/);
      expect(errorOf(result).message).not.toMatch(/Failed query|acc_1/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    const unset = await inProcess((io) => runAdmin(["account", "plan", "--account", "acc_1", "--plan", "growth", "--persist-to="], io));
    expect(unset.status).toBe(2);
    expect(errorOf(unset).message).toMatch(/^--persist-to needs a directory/);
  });
});

describe("passwords", () => {
  const create = (email: string, stdin: Parameters<typeof inProcess>[1]) =>
    inProcess(
      (io) => runAdmin(["account", "create", "--email", email, "--password-stdin", "--persist-to", file.dir], io, file.platform.borrow),
      stdin,
    );
  const asked = (email: string, typed: string[]) =>
    inProcess((io) => runAdmin(["account", "create", "--email", email, "--persist-to", file.dir], io, file.platform.borrow), { typed });

  it.each([
    ["nothing piped in", "", /standard input holds no password/],
    ["an empty first line", "\ncorrect horse battery\n", /standard input holds no password/],
    ["a short password", "short\n", /at least 10 characters/],
  ])("refuses %s, writing nothing", async (_, stdin, message) => {
    const before = await counts();
    const result = await create("piped@example.com", stdin);
    expect(result.status).not.toBe(0);
    expect(errorOf(result).message).toMatch(message);
    expect(await counts()).toEqual(before);
  });

  it("typed at a terminal, keep no part of a cursor or function key, and take Backspace", () => {
    const typed = (...chunks: string[]) => {
      const line = new HiddenLine();
      for (const chunk of chunks) {
        const ended = line.feed(chunk);
        if (ended) return { ended, text: line.text };
      }
      return { ended: undefined, text: line.text };
    };
    // Left arrow (CSI), F1 (SS3), Ctrl+Right (CSI with parameters), Delete (CSI ~), split across reads.
    expect(typed("pass-word-123\u001b[D\r")).toEqual({ ended: "enter", text: "pass-word-123" });
    expect(typed("ab\u001bOPcd", "\u001b[1;5Cef\u001b[3", "~gh\r")).toEqual({ ended: "enter", text: "abcdefgh" });
    expect(typed("correct horsf\u007fe battery\n")).toEqual({ ended: "enter", text: "correct horse battery" });
    // The Esc key alone, then the password: nothing of it is lost.
    expect(typed("\u001b", "pass-word-123\r")).toEqual({ ended: "enter", text: "pass-word-123" });
    expect(typed("secret\u0003")).toMatchObject({ ended: "cancel" });
    expect(typed("\u0004")).toMatchObject({ ended: "cancel" });
  });

  it("refuses two different passwords typed at the terminal, writing nothing", async () => {
    const before = await counts();
    const result = await asked("typed@example.com", ["correct horse battery", "correct horse batery"]);
    expect(result.status).toBe(2);
    expect(errorOf(result).message).toMatch(/the two passwords differ/);
    expect(await counts()).toEqual(before);
  });

  it("takes the first line of what is piped in, without its line ending, and one typed twice", async () => {
    const { verifyPassword } = await import("../../src/accounts/passwords");
    const hashOf = async (email: string) =>
      (await file.platform.db.query.accounts.findFirst({ where: (a, { eq }) => eq(a.email, email) }))!.passwordHash;
    expect((await create("crlf@example.com", "correct horse battery\r\nignored\n")).status).toBe(0);
    expect(await verifyPassword("correct horse battery", await hashOf("crlf@example.com"))).toBe(true);
    expect((await asked("typed@example.com", ["typed horse battery", "typed horse battery"])).status).toBe(0);
    expect(await verifyPassword("typed horse battery", await hashOf("typed@example.com"))).toBe(true);
  });
});
