import { setTimeout as sleep } from "node:timers/promises";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { type ConvertPool, startConvertPool } from "../../tools/importer/convertPool";

const png = async () =>
  new Uint8Array(
    await sharp({ create: { width: 16, height: 16, channels: 4, background: "#123456" } })
      .png()
      .toBuffer(),
  );

/** Blurred circles: few enough for the drawing-cost check, each still costing librsvg some 0.2 s at the master's size. */
const blurredCircles = (count: number) =>
  new TextEncoder().encode(
    '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><defs><filter id="f"><feGaussianBlur stdDeviation="30"/></filter></defs>' +
      '<circle r="40" cx="50" cy="50" filter="url(#f)"/>'.repeat(count) +
      "</svg>",
  );

/** A pool whose threads cannot start: their loader cannot be found, as when sharp's native module fails to load. */
function poolThatCannotStart(): ConvertPool {
  const { execArgv } = process;
  // The pool reads the flags as it starts, synchronously: no other test file's pool sees these.
  process.execArgv = [...execArgv, "--import", "./no-such-loader.mjs"];
  try {
    return startConvertPool(2);
  } finally {
    process.execArgv = execArgv;
  }
}

const cannotStart = {
  ok: false,
  error: {
    code: "internal",
    message: expect.stringMatching(/^image conversion failed: the conversion threads could not start: .*no-such-loader\.mjs/),
  },
};

describe("the conversion pool", () => {
  it("fails a conversion that runs past its time limit, and converts the next file on a fresh thread", async () => {
    const pool = startConvertPool(1, { timeoutMs: 500 });
    try {
      expect(await pool.convert(blurredCircles(8))).toEqual({
        ok: false,
        error: { code: "invalid_argument", message: "image conversion took longer than 0.5 s" },
      });
      expect(await pool.convert(await png())).toMatchObject({ ok: true, value: { width: 16, height: 16 } });
    } finally {
      await pool.close();
    }
  });

  it("fails conversions with the threads' error when none can start", { timeout: 10_000 }, async () => {
    const pool = poolThatCannotStart();
    try {
      expect(await pool.convert(await png())).toEqual(cannotStart);
      expect(await pool.convert(await png())).toEqual(cannotStart);
    } finally {
      await pool.close();
    }
  });

  it("fails a conversion asked for after every thread died idle, rather than hand it to a dead one", { timeout: 10_000 }, async () => {
    const pool = poolThatCannotStart();
    try {
      // The threads die before any image reaches them, as they did behind a slow staging.
      await sleep(1000);
      expect(await pool.convert(await png())).toEqual(cannotStart);
    } finally {
      await pool.close();
    }
  });
});

describe("conversions given up on", () => {
  it("hold no more threads than the pool has: past that, images fail at once until a render ends", { timeout: 60_000 }, async () => {
    const pool = startConvertPool(1, { timeoutMs: 300 });
    try {
      // Each of these renders on for seconds after it is given up; the second leaves no thread.
      for (let i = 0; i < 2; i++)
        expect(await pool.convert(blurredCircles(20))).toMatchObject({
          ok: false,
          error: { message: "image conversion took longer than 0.3 s" },
        });
      expect(await pool.convert(await png())).toEqual({
        ok: false,
        error: { code: "internal", message: "image conversion failed: 2 images whose conversion took over 0.3 s still hold the cores" },
      });
      // Once their renders end, a thread takes their place again.
      let converted = await pool.convert(await png());
      for (let waited = 0; !converted.ok && waited < 40; waited++) {
        await sleep(1000);
        converted = await pool.convert(await png());
      }
      expect(converted).toMatchObject({ ok: true, value: { width: 16, height: 16 } });
    } finally {
      await pool.close();
    }
  });
});
