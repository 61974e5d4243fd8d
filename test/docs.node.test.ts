import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The documentation stays true to the tree: every relative link leads to a file that exists
 * (and, into a Markdown file, to a heading it has), every `npm run <script>` it names is a
 * script of the package it is about, and the README stays a front door (docs/README.md).
 */
const root = resolve(import.meta.dirname, "..");

/** The hook before a change is finished counts bytes (`wc -c`), so the limit is held in bytes, which also bounds characters. */
const README_LIMIT = 12_000;

const documents = [
  join(root, "README.md"),
  ...readdirSync(join(root, "docs"), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".md"))
    .map((name) => join(root, "docs", name)),
  join(root, "packages/sdk/README.md"),
  join(root, "data/seed/README.md"),
];

const read = (file: string) => readFileSync(file, "utf8");

/** The text outside fenced code blocks. */
const withoutFences = (markdown: string) => markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");

/** The text outside fenced code blocks and inline code, where a link is a link. */
const prose = (markdown: string) => withoutFences(markdown).replace(/`[^`\n]*`/g, "");

/** GitHub's anchor for a heading: lower-cased, punctuation dropped, spaces as hyphens; repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of withoutFences(markdown).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = heading!
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
      .replace(/ /g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

const LINK = /!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;

/** Every relative link of a document that leads nowhere, as `file: target`. */
function brokenLinks(file: string): string[] {
  const text = read(file);
  const broken: string[] = [];
  for (const [, target] of prose(text).matchAll(LINK)) {
    // Addresses with a scheme (https:, mailto:) and protocol-relative ones are not the tree's.
    if (/^[a-z][a-z0-9+.-]*:/i.test(target!) || target!.startsWith("//")) continue;
    const [path, anchor] = target!.split("#", 2) as [string, string | undefined];
    const destination = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
    const where = `${relative(root, file)}: ${target}`;
    if (path.startsWith("/") || !destination.startsWith(root) || !existsSync(destination)) {
      broken.push(`${where} (no such file)`);
    } else if (anchor !== undefined && destination.endsWith(".md") && !anchorsOf(read(destination)).has(anchor)) {
      broken.push(`${where} (no such heading)`);
    }
  }
  return broken;
}

const scriptsOf = (packageJson: string) =>
  new Set(Object.keys((JSON.parse(read(packageJson)) as { scripts?: Record<string, string> }).scripts ?? {}));

/** Every `npm run X`, `npm start` or `npm test` a document names that its package lacks. */
function missingScripts(file: string): string[] {
  // The SDK's README is about the SDK's own package; every other document about the service's.
  const packageJson = file === join(root, "packages/sdk/README.md") ? join(root, "packages/sdk/package.json") : join(root, "package.json");
  const scripts = scriptsOf(packageJson);
  const named = [...read(file).matchAll(/\bnpm (?:run(?:-script)? ([\w:-]+)|(start|test)\b)/g)].map(([, run, short]) =>
    (run ?? short)!.replace(/:+$/, ""),
  );
  return [...new Set(named)].filter((name) => !scripts.has(name)).map((name) => `${relative(root, file)}: npm run ${name}`);
}

describe("the documentation", () => {
  it("finds the documents it checks", () => {
    expect(documents.length).toBeGreaterThan(5);
    for (const file of documents) expect(existsSync(file), relative(root, file)).toBe(true);
  });

  it("links only to files and headings that exist", () => {
    expect(documents.flatMap(brokenLinks)).toEqual([]);
  });

  it("names only npm scripts that exist", () => {
    expect(documents.flatMap(missingScripts)).toEqual([]);
  });

  it(`keeps README.md within ${README_LIMIT.toLocaleString("en")} characters`, () => {
    expect(Buffer.byteLength(read(join(root, "README.md")), "utf8")).toBeLessThanOrEqual(README_LIMIT);
  });

  it("reads anchors as GitHub makes them", () => {
    expect([...anchorsOf("# `npm run bench:scale`\n## Keys and CORS\n## Keys and CORS\n```\n# not a heading\n```\n")]).toEqual([
      "npm-run-benchscale",
      "keys-and-cors",
      "keys-and-cors-1",
    ]);
  });
});
