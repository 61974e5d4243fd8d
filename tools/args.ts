import { parseArgs, type ParseArgsConfig } from "node:util";

/** A command-line mistake: printed as a clear message with a non-zero exit, before anything is written. */
export class UsageError extends Error {}

/** The options and positionals of `args`; an unknown option, or one given twice that is not a list, is a UsageError. */
export function parseCommandLine<T extends NonNullable<ParseArgsConfig["options"]>>(args: string[], options: T) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true, tokens: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  // parseArgs keeps the last of a repeated option: `--plan growth --plan free` would quietly be free.
  const seen = new Set<string>();
  for (const token of parsed.tokens) {
    if (token.kind !== "option" || options[token.name]?.multiple) continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} is given more than once`);
    seen.add(token.name);
  }
  return parsed;
}

/** A whole-number option: decimal digits only (not `0x10`, `1e3`, `1.0` or ` 7 `) from `min` to `max`, else UsageError(message). */
export function wholeNumber(text: string, message: string, min: number, max: number): number {
  const value = /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= min && value <= max)) throw new UsageError(message);
  return value;
}

/** Options every tool takes: where the storage is. */
export const storageOptions = {
  remote: { type: "boolean", default: false },
  "persist-to": { type: "string" },
} as const;

/** Where a command writes: the process's streams, or a test's buffers. */
export interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** Where a command reads what must not be one of its arguments (a password): the process's standard input, or a test's. */
export interface Input {
  /** A person types at it: a password is then asked for, and not echoed. */
  isTTY?: boolean;
  /** Everything piped in, to its end. */
  readAll(): Promise<string>;
  /** One line typed without echo, after `prompt` on stderr. */
  askHidden(prompt: string): Promise<string>;
}

export interface CommandIo {
  stdout: Output;
  stderr: Output;
  stdin?: Input;
}

const processInput: Input = {
  get isTTY() {
    return process.stdin.isTTY === true;
  },
  async readAll() {
    let text = "";
    for await (const chunk of process.stdin.setEncoding("utf8")) {
      text += chunk;
      if (text.length > MAX_PIPED) break;
    }
    return text;
  },
  askHidden(prompt) {
    const stdin = process.stdin;
    process.stderr.write(prompt);
    stdin.setRawMode(true);
    stdin.setEncoding("utf8");
    stdin.resume();
    return new Promise((resolve, reject) => {
      const line = new HiddenLine();
      const finish = (outcome: () => void) => {
        stdin.off("data", onData);
        stdin.setRawMode(false);
        stdin.pause();
        process.stderr.write("\n");
        outcome();
      };
      const onData = (chunk: string) => {
        const ended = line.feed(chunk);
        // Ctrl-C, or Ctrl-D on an empty line: nothing is written.
        if (ended === "cancel") finish(() => reject(new UsageError("cancelled")));
        else if (ended === "enter") finish(() => resolve(line.text));
      };
      stdin.on("data", onData);
    });
  },
};

/**
 * A line typed at a hidden prompt, key by key, as a terminal in raw mode sends it: Backspace
 * edits, Enter ends it, Ctrl-C (or Ctrl-D on an empty line) cancels. A cursor or function key
 * comes as an escape sequence (`ESC [ D` for Left): dropped whole, where keeping all but its
 * ESC would put `[D` into a password the person never typed.
 */
export class HiddenLine {
  text = "";
  /** Within an escape sequence: just after ESC, in a CSI one (`ESC [` … final byte), or before an SS3 one's last character (`ESC O P`). */
  private escape: "" | "start" | "csi" | "ss3" = "";

  feed(chunk: string): "enter" | "cancel" | undefined {
    for (const char of chunk) {
      if (this.escape === "start") this.escape = char === "[" ? "csi" : char === "O" ? "ss3" : "";
      else if (this.escape === "ss3") this.escape = "";
      else if (this.escape === "csi") {
        if (char >= "@" && char <= "~") this.escape = "";
      } else if (char === "\u001b") this.escape = "start";
      else if (char === "\r" || char === "\n") return "enter";
      else if (char === "\u0003" || (char === "\u0004" && this.text === "")) return "cancel";
      else if (char === "\u007f" || char === "\b") this.text = Array.from(this.text).slice(0, -1).join("");
      else if (char >= " ") this.text += char;
    }
    // A terminal sends a key's whole sequence at once: an ESC that ends a read was the Esc key.
    if (this.escape === "start") this.escape = "";
    return undefined;
  }
}

/** More than any password: standard input is read no further. */
const MAX_PIPED = 4096;

export const processIo: CommandIo = { stdout: process.stdout, stderr: process.stderr, stdin: processInput };

/** The options of a command that takes a password: never as an argument, where shell history and the process list keep it. */
export const passwordOptions = {
  password: { type: "string" },
  "password-stdin": { type: "boolean", default: false },
} as const;

/**
 * The password a command was given: the first line of standard input with `--password-stdin`,
 * else asked for at the terminal without echo, twice (a typo would set a password nobody
 * knows). `--password P` is refused with the way to do it instead.
 */
export async function passwordOf(
  values: { password?: string | undefined; "password-stdin"?: boolean | undefined },
  io: CommandIo,
): Promise<string> {
  if (values.password !== undefined) {
    throw new UsageError(
      "--password is not taken on the command line, where shell history and the process list keep it: type the password when asked, or pipe it in with --password-stdin",
    );
  }
  if (values["password-stdin"]) {
    const line = ((await io.stdin?.readAll()) ?? "").split(/\r?\n/, 1)[0] ?? "";
    if (line === "") throw new UsageError("--password-stdin: standard input holds no password (its first line is the password)");
    return line;
  }
  if (!io.stdin?.isTTY) throw new UsageError("the password is asked for at a terminal; without one, pipe it in with --password-stdin");
  const password = await io.stdin.askHidden("Password: ");
  if ((await io.stdin.askHidden("The same password again: ")) !== password)
    throw new UsageError("the two passwords differ; nothing was changed");
  return password;
}
