import { SingleBar } from "cli-progress";
import type { Output } from "../args";

/**
 * Progress of a long job on stderr: a bar (count, rate, ETA) on a terminal; elsewhere (a log,
 * CI, `npm start` beside the dev server's own output) a plain line every few seconds.
 */
export interface Progress {
  update(done: number, extra?: { failed?: number }): void;
  /** Prints a line of its own without breaking the bar. */
  note(line: string): void;
  stop(): void;
}

export interface ProgressOptions {
  label: string;
  /** What is counted, plural: "rows", "logos". */
  unit: string;
  total: number | Promise<number>;
  /** Done already when this run starts (a resumed import); the rate counts only this run's. */
  from?: number;
  stream?: Output;
  /** Seconds between plain lines (default 5). */
  every?: number;
  /** Force plain lines even on a terminal. */
  plain?: boolean;
}

export function startProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  const started = Date.now();
  let total: number | undefined = typeof options.total === "number" ? options.total : undefined;
  const from = options.from ?? 0;
  let done = from;
  let failed = 0;
  const rate = () => (done - from) / Math.max((Date.now() - started) / 1000, 0.001);

  if (stream.isTTY && !options.plain) {
    const bar = new SingleBar({
      stream: stream as NodeJS.WriteStream,
      format: `${options.label} {bar} {value}/{total} ${options.unit} | {rate} ${options.unit}/s | ETA {eta_formatted} | {failed} skipped`,
      hideCursor: true,
    });
    bar.start(total ?? 0, from, { rate: "0.0", failed: 0 });
    if (typeof options.total !== "number") void options.total.then((n) => bar.setTotal(n));
    return {
      update(value, extra) {
        done = value;
        failed = extra?.failed ?? failed;
        bar.update(value, { rate: rate().toFixed(1), failed });
      },
      // Clear the bar's line first; it redraws on the next update.
      note: (line) => stream.write(`\r\x1b[K${line}\n`),
      stop: () => bar.stop(),
    };
  }

  if (typeof options.total !== "number") void options.total.then((n) => (total = n));
  const line = () => {
    const seconds = (Date.now() - started) / 1000;
    const left = total !== undefined && rate() > 0 ? `, ${Math.max(0, Math.round((total - done) / rate()))} s left` : "";
    const of = total !== undefined ? `/${total.toLocaleString("en")}` : "";
    stream.write(
      `${options.label}: ${done.toLocaleString("en")}${of} ${options.unit} in ${Math.round(seconds)} s (${rate().toFixed(0)}/s${left})${failed ? `, ${failed} skipped` : ""}\n`,
    );
  };
  const timer = setInterval(line, (options.every ?? 5) * 1000);
  timer.unref();
  return {
    update(value, extra) {
      done = value;
      failed = extra?.failed ?? failed;
    },
    note: (text) => stream.write(`${text}\n`),
    stop() {
      clearInterval(timer);
    },
  };
}
