/**
 * npm run passwords:list — writes src/accounts/commonPasswords.ts, the common passwords the
 * Worker refuses (src/accounts/passwordStrength.ts), from zxcvbn-ts's maintained list
 * (@zxcvbn-ts/language-common, a development dependency: the Worker ships only this subset).
 *
 * Of its ~49,000 passwords, most are shorter than the 10 characters a password must have, so
 * they could never be chosen as they are; kept are those of 10 characters or more, which
 * could, and the 10,000 most common of 4 or more, which are what "password123" and
 * "letmein!!" are made of. Some 11,400 passwords, about 45 KB gzipped, instead of the whole
 * list's 230 KB: run again when the package is updated.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { dictionary } from "@zxcvbn-ts/language-common";
import { projectRoot } from "../platform";

const MIN_LENGTH = 10;
const CORES = 10_000;

const all = dictionary["passwords-common"];
const kept = all.filter((password, rank) => password.length >= MIN_LENGTH || (rank < CORES && password.length >= 4));
const target = join(projectRoot, "src", "accounts", "commonPasswords.ts");
writeFileSync(
  target,
  `// Written by \`npm run passwords:list\` (tools/accounts/commonPasswords.ts) from @zxcvbn-ts/language-common ${
    (await import("@zxcvbn-ts/language-common/package.json", { with: { type: "json" } })).default.version
  }: do not edit.\n` +
    "/** The common passwords refused (src/accounts/passwordStrength.ts), most common first, one per line. */\n" +
    `export const COMMON_PASSWORDS = ${JSON.stringify(kept.join("\n"))};\n`,
);
process.stderr.write(`${kept.length} of ${all.length} common passwords written to ${target}\n`);
