import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { root } from "./tools/helpers";

/**
 * The layout's promises (docs/architecture.md): src/ is the Worker and only the Worker, so
 * nothing in it reaches into tools/, data/ or packages/ (the Node side, the seed's data, the
 * SDK customers install); no file imports itself back through others, and no room (a
 * top-level folder of src/, or a file beside them) depends on a room that depends on it.
 * Type-only imports count too: a cycle of types is a cycle a reader has to untangle.
 */
const src = join(root, "src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?\sfrom\s+"(\.[^"]+)"|\bimport\(\s*"(\.[^"]+)"\s*\)|import\.meta\.glob\(\s*"(\.[^"]+)"/g;

/** Every relative module a file names, resolved against it (statically, dynamically or by glob). */
function specifiersOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(IMPORT)].map(([, from, dynamic, glob]) => resolve(dirname(file), (from ?? dynamic ?? glob)!));
}

function importsOf(file: string): string[] {
  return specifiersOf(file).flatMap((spec) => {
    const base = spec.replace(/\.js$/, "");
    const found = [`${base}.ts`, `${base}.tsx`, join(base, "index.ts")].find((candidate) => {
      try {
        return statSync(candidate).isFile();
      } catch {
        return false;
      }
    });
    return found?.startsWith(src) ? [found] : [];
  });
}

/** Strongly connected components with more than one member (Tarjan). */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    order.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, order.get(next)!));
    }
    if (low.get(node) === order.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!order.has(node)) visit(node);
  return found;
}

const files = new Map(sourceFiles(src).map((file) => [relative(src, file), importsOf(file).map((f) => relative(src, f))]));
const roomOf = (file: string) => file.split("/")[0]!;

describe("the layout", () => {
  it("keeps src/ to the Worker: nothing in it imports tools/, data/, packages/ or anything outside it but schema/ and its version", () => {
    // The tables (schema/) and the service's version (package.json) are the Worker's own too.
    const allowed = (target: string) =>
      target.startsWith(`${src}/`) || target.startsWith(join(root, "schema")) || target === join(root, "package.json");
    const outside = [...files.keys()].flatMap((file) =>
      specifiersOf(join(src, file))
        .filter((target) => !allowed(target))
        .map((target) => `${file} → ${relative(root, target)}`),
    );
    expect(outside).toEqual([]);
  });

  it("makes every cache an isolate keeps through the one registry (src/lib/isolateCaches.ts), so none escapes its budget", () => {
    // A cache at a module's top level lives as long as the isolate; one made inside a function is that call's.
    const stray = [...files.keys()]
      .filter((file) => !file.startsWith("lib/"))
      .flatMap((file) =>
        readFileSync(join(src, file), "utf8")
          .split("\n")
          .flatMap((line, i) =>
            /^(?:export )?const .*\bnew (BoundedCache|ExpiringCache|RecentBytes)\b/.test(line) ? [`${file}:${i + 1}`] : [],
          ),
      );
    expect(stray).toEqual([]);
  });

  it("reads every file of src/", () => {
    expect(files.size).toBeGreaterThan(50);
    expect(files.get("app.ts")).toContain("lookup/routes.ts");
  });

  it("has no import cycle between files", () => {
    expect(cycles(new Map([...files].map(([file, deps]) => [file, new Set(deps)])))).toEqual([]);
  });

  it("has no two rooms that depend on each other", () => {
    const rooms = new Map<string, Set<string>>();
    for (const [file, deps] of files) {
      const edges = rooms.get(roomOf(file)) ?? new Set<string>();
      for (const dep of deps) if (roomOf(dep) !== roomOf(file)) edges.add(roomOf(dep));
      rooms.set(roomOf(file), edges);
    }
    expect(cycles(rooms)).toEqual([]);
  });
});
