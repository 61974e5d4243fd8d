/**
 * One thread of the conversion pool (./convertPool.ts): converts the images it is sent with
 * prepareLogo and sends back every byte field of the result without copying it.
 */
import { parentPort } from "node:worker_threads";
import type { PrepareOptions } from "../../src/catalogue/preparedImage";
import sharp from "sharp";
import { prepareLogo } from "./prepare";

// The pool runs a thread per core; libvips threads of its own in each would only contend.
sharp.concurrency(1);

parentPort!.on("message", async ({ bytes, prepare }: { bytes: Uint8Array; prepare: PrepareOptions }) => {
  let prepared: Awaited<ReturnType<typeof prepareLogo>>;
  try {
    prepared = await prepareLogo(bytes, prepare);
  } catch (error) {
    prepared = { ok: false, error: `image could not be converted: ${(error as Error).message}` };
  }
  if (!prepared.ok) return parentPort!.postMessage({ ok: false, error: prepared.error });
  const buffers = new Set<ArrayBuffer>();
  for (const value of [...Object.values(prepared.logo), ...Object.values(prepared.logo.files)]) {
    // Only whole buffers can move; a view into a larger one is copied instead.
    if (value instanceof Uint8Array && value.byteOffset === 0 && value.byteLength === value.buffer.byteLength)
      buffers.add(value.buffer as ArrayBuffer);
  }
  parentPort!.postMessage({ ok: true, image: prepared.logo }, [...buffers]);
});

// Loaded, sharp with it: the pool sends images to a thread only from now, and tells a thread
// that could not start (which it does not replace) from one that died converting (which it does).
parentPort!.postMessage("ready");
