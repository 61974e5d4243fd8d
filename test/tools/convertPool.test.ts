import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type ConvertPool, startConvertPool } from "../../tools/importer/convertPool";

const png = async () =>
  new Uint8Array(
    await sharp({ create: { width: 16, height: 16, channels: 4, background: "#123456" } })
      .png()
      .toBuffer(),
  );

/**
 * Conversions that take as long as the test says (./heldConvertThread.ts): a held image holds
 * its thread, as a render librsvg cannot be stopped in does, until the test lets it end. No
 * test depends on how fast this machine draws an SVG.
 */
const HELD = new URL("./heldConvertThread.ts", import.meta.url);
let holds: string | undefined;
afterEach(() => {
  // Renders still held end with the test, so that their threads exit.
  if (holds) for (const name of ["0", "1", "2"]) writeFileSync(join(holds, name), "");
  holds = undefined;
});
function heldRender(index: number) {
  holds ??= mkdtempSync(join(tmpdir(), "logo-lookup-holds-"));
  const file = join(holds, String(index));
  return { image: new TextEncoder().encode(`HOLD ${file}`), end: () => writeFileSync(file, "") };
}

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
    const pool = startConvertPool(1, { timeoutMs: 1000, thread: HELD });
    try {
      // Held until after the answer: only the time limit can end this conversion.
      expect(await pool.convert(heldRender(0).image)).toEqual({
        ok: false,
        error: { code: "invalid_argument", message: "image conversion took longer than 1 s" },
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
      await vi.waitFor(() => expect(pool.live).toBe(0), { timeout: 9_000, interval: 10 });
      expect(await pool.convert(await png())).toEqual(cannotStart);
    } finally {
      await pool.close();
    }
  });
});

describe("the pool's preparation", () => {
  const blackRing = new TextEncoder().encode(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 20"><circle cx="20" cy="10" r="7" fill="none" stroke="#000" stroke-width="3"/></svg>',
  );

  it("decides the themes now by default, and leaves them to the first lookup when asked", { timeout: 20_000 }, async () => {
    const pool = startConvertPool(2);
    try {
      const [decided, left, again] = await Promise.all([
        pool.convert(blackRing),
        pool.convert(blackRing, { themes: "on first lookup" }),
        pool.convert(blackRing, { themes: "now" }),
      ]);
      for (const now of [decided, again]) {
        expect(now.ok && now.value.renditions).toMatchObject({ dark: true });
        expect(now.ok && now.value.renditions.pending).toBeUndefined();
        expect(now.ok && Object.keys(now.value.files)).toContain("dark");
      }
      expect(left.ok && left.value.renditions).toMatchObject({ dark: false, pending: true });
      expect(left.ok && Object.keys(left.value.files)).toEqual(["master"]);
      expect(left.ok && decided.ok && left.value.contentHash).toBe(decided.ok && decided.value.contentHash);
    } finally {
      await pool.close();
    }
  });
});

describe("conversions given up on", () => {
  it("hold no more threads than the pool has: past that, images fail at once until a render ends", async () => {
    const pool = startConvertPool(1, { timeoutMs: 1000, thread: HELD });
    const renders = [heldRender(0), heldRender(1)];
    try {
      // Each of these renders on after it is given up; the second leaves no thread.
      for (const render of renders)
        expect(await pool.convert(render.image)).toMatchObject({
          ok: false,
          error: { message: "image conversion took longer than 1 s" },
        });
      expect(pool.live).toBe(0);
      expect(await pool.convert(await png())).toEqual({
        ok: false,
        error: { code: "internal", message: "image conversion failed: 2 images whose conversion took over 1 s still hold the cores" },
      });
      // Once their renders end, a thread takes their place again.
      for (const render of renders) render.end();
      await vi.waitFor(() => expect(pool.live).toBe(1), { timeout: 10_000, interval: 10 });
      expect(await pool.convert(await png())).toMatchObject({ ok: true, value: { width: 16, height: 16 } });
    } finally {
      await pool.close();
    }
  });
});
