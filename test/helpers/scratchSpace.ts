import { accessSync, constants, mkdtempSync, rmSync, statfsSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Linux's RAM-backed file system, where writing a file never waits for a disk. */
const RAM_DISK = "/dev/shm";
/** What it must have free: a run peaks at ~120 MB there (containers often give /dev/shm 64 MB). */
const NEEDED_BYTES = 512 * 1024 * 1024;

/**
 * Moves the suite's temporary files (TMPDIR) to a folder of this run on the RAM disk, where
 * there is one, and removes it when the run ends; returns the system's own temporary folder.
 *
 * Miniflare keeps every binding's storage under the temporary folder, as SQLite files it syncs to
 * disk on every write, and the tests write it all the time: each Worker test starts from an empty
 * D1, KV and R2, which cost ~100 ms a test on this machine's disk and ~25 ms in RAM; the tools'
 * states (tools/platform.ts) are written the same way. Nothing of it outlives the run.
 */
export function scratchSpaceInMemory(): string {
  const system = tmpdir();
  if (process.env.LOGO_LOOKUP_SCRATCH) return process.env.LOGO_LOOKUP_SYSTEM_TMPDIR ?? system; // the config, loaded again
  try {
    if (process.platform !== "linux" || !statSync(RAM_DISK).isDirectory()) return system;
    accessSync(RAM_DISK, constants.W_OK);
    const { bavail, bsize } = statfsSync(RAM_DISK);
    if (bavail * bsize < NEEDED_BYTES) return system;
  } catch {
    return system;
  }
  const scratch = mkdtempSync(join(RAM_DISK, "logo-lookup-tests-"));
  process.env.LOGO_LOOKUP_SCRATCH = scratch;
  process.env.LOGO_LOOKUP_SYSTEM_TMPDIR = system;
  process.env.TMPDIR = scratch;
  process.once("exit", () => rmSync(scratch, { recursive: true, force: true }));
  return system;
}
