import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import type { PreparedImage } from "../../catalogue/importLogo";
import { fail, ok, type Result } from "../../lib/errors";

/**
 * Image conversion on every core: a pool of worker threads, each running prepareLogo (sharp)
 * on one image at a time. Images are handed over and back without copying.
 */
export interface ConvertPool {
  readonly threads: number;
  convert(bytes: Uint8Array): Promise<Result<PreparedImage>>;
  close(): Promise<void>;
}

/**
 * The Node flag the importing commands run with (package.json's scripts, the first start's
 * seeding). Conversion allocates some 20 MB of pixel buffers per SVG logo; V8's parallel and
 * concurrent collection of them, on helper threads, cost about as much CPU again as the
 * conversion itself, on the very cores the conversion threads and workerd need (README,
 * Benchmarks). Collected on each thread itself, the same conversion takes about a third less
 * CPU and less time.
 */
export const SINGLE_THREADED_GC = "--single-threaded-gc";

type Reply = { ok: true; image: PreparedImage } | { ok: false; error: string };

export function startConvertPool(threads = availableParallelism()): ConvertPool {
  // Under tsx the loader comes along in execArgv; elsewhere (the test runner) it is added. The
  // V8 flag below applies to every thread of the process already, and a Worker refuses it.
  const inherited = process.execArgv.filter((arg) => arg !== SINGLE_THREADED_GC);
  const execArgv = inherited.some((arg) => arg.includes("tsx")) ? inherited : [...inherited, "--import", "tsx"];
  const queue: Array<{ bytes: Uint8Array; resolve: (result: Result<PreparedImage>) => void }> = [];
  const idle: Worker[] = [];
  const busy = new Map<Worker, (result: Result<PreparedImage>) => void>();
  let alive = 0;

  const dispatch = () => {
    while (idle.length > 0 && queue.length > 0) {
      const worker = idle.pop()!;
      const job = queue.shift()!;
      busy.set(worker, job.resolve);
      // The caller keeps its bytes (a row may need them again); the thread gets a copy.
      worker.postMessage({ bytes: job.bytes });
    }
    if (alive === 0) for (const job of queue.splice(0)) job.resolve(fail("internal", "image conversion failed: no conversion thread left"));
  };

  const workers = Array.from({ length: Math.max(1, threads) }, () => {
    const worker = new Worker(new URL("./convertThread.ts", import.meta.url), { execArgv });
    alive++;
    worker.on("message", (reply: Reply) => {
      busy.get(worker)?.(reply.ok ? ok(reply.image) : fail("invalid_argument", reply.error));
      busy.delete(worker);
      idle.push(worker);
      dispatch();
    });
    // A thread that dies takes its image with it; the others carry on.
    worker.on("error", (error) => {
      alive--;
      busy.get(worker)?.(fail("internal", `image conversion failed: ${error.message}`));
      busy.delete(worker);
      dispatch();
    });
    idle.push(worker);
    return worker;
  });

  return {
    threads: workers.length,
    convert: (bytes) =>
      new Promise((resolve) => {
        queue.push({ bytes, resolve });
        dispatch();
      }),
    async close() {
      await Promise.all(workers.map((worker) => worker.terminate()));
    },
  };
}
