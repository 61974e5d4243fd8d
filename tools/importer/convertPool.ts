import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import type { PreparedImage } from "../../src/catalogue/importLogo";
import type { PrepareOptions } from "../../src/catalogue/preparedImage";
import { fail, ok, type Result } from "../../src/lib/errors";

/**
 * Image conversion on every core: a pool of worker threads, each running prepareLogo (sharp)
 * on one image at a time. Images are handed over and back without copying. A conversion that
 * takes too long fails, and so does one whose thread dies; a fresh thread replaces either.
 */
export interface ConvertPool {
  readonly threads: number;
  /** Threads started or starting, and not given up on. */
  readonly live: number;
  /** An image prepared as `prepare` says (by default, its themes decided now). */
  convert(bytes: Uint8Array, prepare?: PrepareOptions): Promise<Result<PreparedImage>>;
  close(): Promise<void>;
}

/**
 * The Node flag the importing commands run with (package.json's scripts, the first start's
 * seeding). Conversion allocates some 20 MB of pixel buffers per SVG logo; V8's parallel and
 * concurrent collection of them, on helper threads, cost about as much CPU again as the
 * conversion itself, on the very cores the conversion threads and workerd need (measured
 * with npm run bench:import). Collected on each thread itself, the same conversion takes about
 * a third less CPU and less time.
 */
export const SINGLE_THREADED_GC = "--single-threaded-gc";

/** The thread says "ready" once loaded (sharp with it), then answers each image it is sent. */
type Reply = "ready" | { ok: true; image: PreparedImage } | { ok: false; error: string };

/**
 * How long one conversion may take. The drawing-cost check (./svgCost.ts) refuses the files
 * known to hold librsvg for minutes, and a logo converts in well under a second; this bounds
 * what the check cannot foresee, so that no file holds a thread for the rest of the import.
 */
export const CONVERSION_TIMEOUT_MS = 60_000;

/** The script each thread runs; tests give one whose conversions take as long as they say. */
const THREAD = new URL("./convertThread.ts", import.meta.url);

export function startConvertPool(
  threads = availableParallelism(),
  { timeoutMs = CONVERSION_TIMEOUT_MS, thread = THREAD }: { timeoutMs?: number; thread?: URL } = {},
): ConvertPool {
  // Under tsx the loader comes along in execArgv; elsewhere (the test runner) it is added. The
  // V8 flag below applies to every thread of the process already, and a Worker refuses it.
  const inherited = process.execArgv.filter((arg) => arg !== SINGLE_THREADED_GC);
  const execArgv = inherited.some((arg) => arg.includes("tsx")) ? inherited : [...inherited, "--import", "tsx"];
  type Answer = (result: Result<PreparedImage>) => void;
  const count = Math.max(1, threads);
  const queue: Array<{ bytes: Uint8Array; prepare: PrepareOptions; resolve: Answer }> = [];
  const idle: Worker[] = [];
  const busy = new Map<Worker, { resolve: Answer; timer: ReturnType<typeof setTimeout> }>();
  // Threads started or starting, and not given up on; and those given up on mid-render.
  const live = new Set<Worker>();
  const abandoned = new Set<Worker>();
  let noThreadLeft = "no conversion thread left";
  let closed = false;

  const dispatch = () => {
    while (idle.length > 0 && queue.length > 0) {
      const worker = idle.pop()!;
      const job = queue.shift()!;
      const timer = setTimeout(() => {
        // terminate() cannot stop librsvg mid-render (it settles once the render returns, and the
        // process exits only then): the thread is let go, not waited for, and a fresh one takes
        // its place while no more such renders than threads hold the cores; past that, images
        // fail at once until one of them ends, rather than threads piling up.
        void worker.terminate();
        abandoned.add(worker);
        worker.once("exit", () => {
          abandoned.delete(worker);
          // Its core is free again.
          if (!closed && live.size + abandoned.size < count) start();
        });
        if (abandoned.size > count)
          noThreadLeft = `${abandoned.size} images whose conversion took over ${timeoutMs / 1000} s still hold the cores`;
        retire(worker, fail("invalid_argument", `image conversion took longer than ${timeoutMs / 1000} s`), abandoned.size <= count);
      }, timeoutMs);
      busy.set(worker, { resolve: job.resolve, timer });
      // The caller keeps its bytes (a row may need them again); the thread gets a copy.
      worker.postMessage({ bytes: job.bytes, prepare: job.prepare });
    }
    if (live.size === 0) for (const job of queue.splice(0)) job.resolve(fail("internal", `image conversion failed: ${noThreadLeft}`));
  };

  /** A thread gone or given up on: its image, if it had one, fails with `failure`. */
  const retire = (worker: Worker, failure: Result<PreparedImage>, replace: boolean) => {
    live.delete(worker);
    if (idle.includes(worker)) idle.splice(idle.indexOf(worker), 1);
    const job = busy.get(worker);
    if (job) {
      clearTimeout(job.timer);
      busy.delete(worker);
      job.resolve(failure);
    }
    if (replace && !closed) start();
    dispatch();
  };

  const start = () => {
    const worker = new Worker(thread, { execArgv });
    live.add(worker);
    let started = false;
    worker.on("message", (reply: Reply) => {
      if (!live.has(worker)) return;
      const job = busy.get(worker);
      if (reply === "ready") started = true;
      else if (job) {
        clearTimeout(job.timer);
        busy.delete(worker);
        job.resolve(reply.ok ? ok(reply.image) : fail("invalid_argument", reply.error));
      }
      idle.push(worker);
      dispatch();
    });
    // A thread that dies takes its image with it, and a fresh one takes its place; one that
    // could not start would fail again, so the conversions fail instead, saying why.
    const gone = (why: string) => {
      if (!live.has(worker)) return;
      if (!started) noThreadLeft = `the conversion threads could not start: ${why}`;
      retire(worker, fail("internal", `image conversion failed: ${why}`), started);
    };
    worker.on("error", (error) => gone(error.message));
    worker.on("exit", (code) => gone(`the conversion thread exited (code ${code})`));
  };

  for (let index = 0; index < count; index++) start();

  return {
    threads: count,
    get live() {
      return live.size;
    },
    convert: (bytes, prepare = {}) =>
      new Promise((resolve) => {
        queue.push({ bytes, prepare, resolve });
        dispatch();
      }),
    async close() {
      closed = true;
      // Threads given up on are not waited for: each renders on until librsvg returns.
      await Promise.all([...live].map((worker) => worker.terminate()));
    },
  };
}
