import { readFileSync, rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startToolWorker, writeStorageToolConfig } from "../../tools/platform";
import { freshState } from "./helpers";

/** The tool workers the admin and import commands start beside the storage they write. */
let state: { dir: string; cleanup: () => void };
beforeAll(async () => {
  state = await freshState();
});
afterAll(() => state.cleanup());

/** The TCP ports listening on this machine (Linux's table of sockets). */
function listeningPorts(): Set<number> {
  const ports = new Set<number>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.trim().split("\n").slice(1)) {
      const [, local, , status] = line.trim().split(/\s+/);
      if (status === "0A") ports.add(Number.parseInt(local!.split(":").at(-1)!, 16));
    }
  }
  return ports;
}

describe("a tool worker", () => {
  it.skipIf(process.platform !== "linux")(
    "opens no inspector, which would hand any process on the machine its token; without the token it answers 401",
    async () => {
      const configPath = await writeStorageToolConfig({ persistTo: state.dir }, "probe");
      const before = listeningPorts();
      const worker = await startToolWorker("tools/discovery/worker.ts", configPath, { persistTo: state.dir });
      try {
        const opened = [...listeningPorts()].filter((port) => !before.has(port));
        expect(opened).toContain(Number(new URL(worker.url).port));
        for (const port of opened) {
          // As a process would ask an inspector (no browser: any Origin it likes).
          const listing = await fetch(`http://127.0.0.1:${port}/json`, {
            headers: { Origin: "http://localhost" },
            signal: AbortSignal.timeout(2000),
          })
            .then((response) => response.text())
            .catch(() => "");
          expect(listing, `port ${port}`).not.toContain("webSocketDebuggerUrl");
        }
        const stranger = await fetch(`${worker.url}/forget`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ domain: "acme.com" }),
        });
        expect(stranger.status).toBe(401);
        const own = await worker.fetch("/forget", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ domain: "acme.com" }),
        });
        expect(own.status).toBe(200);
      } finally {
        await worker.stop();
        rmSync(configPath, { force: true });
      }
    },
  );
});
