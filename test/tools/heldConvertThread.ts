/**
 * The conversion thread of the pool's tests (./convertPool.test.ts): the real one
 * (tools/importer/convertThread.ts), except that an image reading `HOLD <path>` holds the thread
 * in a synchronous call, as librsvg holds it mid-render, until the file <path> exists. Like
 * librsvg's, the call cannot be cut short by worker.terminate(): the thread exits only once the
 * test has let the "render" end, so how long a conversion takes is the test's to say.
 */
import { execFileSync } from "node:child_process";
import { parentPort } from "node:worker_threads";

const WAIT_FOR_FILE = "const fs = require('node:fs'); const t = setInterval(() => fs.existsSync(process.argv[1]) && clearInterval(t), 5);";

// Registered first: a held image is held before the real handler sees it (and fails it).
parentPort!.on("message", ({ bytes }: { bytes: Uint8Array }) => {
  const held = /^HOLD (.+)$/.exec(new TextDecoder().decode(bytes.subarray(0, 1024)));
  if (held) execFileSync(process.execPath, ["-e", WAIT_FOR_FILE, held[1]!]);
});

await import("../../tools/importer/convertThread");
