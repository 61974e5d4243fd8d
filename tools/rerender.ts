/**
 * npm run rerender -- [--remote] [--persist-to DIR] [--concurrency N]
 *
 * Prepares the renditions of every logo made by an older renditions version again, from the
 * original kept beside it (src/images/renditions.ts, RENDITIONS_VERSION): after an upgrade that
 * changes how renditions are made, and once after migrating to contrast-aware renditions. Only
 * out-of-date logos are touched, each in the import's order (new objects, then the row, then
 * the replaced objects), so it can be stopped and run again at any point, and a second run finds
 * nothing to do. A progress bar (count, rate, ETA) shows on a terminal; otherwise a line every
 * 100 logos. Prints a JSON summary; exits 0 when every logo was re-rendered, 2 when some failed
 * (each reported on stderr), 1 when it could not run.
 */
import { rerenderCommand } from "./rerender/command";

process.exitCode = await rerenderCommand(process.argv.slice(2));
