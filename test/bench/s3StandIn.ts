/**
 * The bucket of a remote load, for `npm run bench:import`: the S3 stand-in of the tests
 * (../fakes/r2S3Api.ts: every PUT's SigV4 signature and payload hash checked) in a process of
 * its own, keeping no bytes, so that its CPU is told apart from the importer's and workerd's.
 * Forked with IPC: it sends {url} once listening, and answers "report" with its CPU so far and
 * what it received.
 */
import { startFakeR2S3 } from "../fakes/r2S3Api";

const s3 = await startFakeR2S3({ discardBodies: true });
process.send!({ url: s3.url });
process.on("message", (message) => {
  if (message !== "report") return;
  const { user, system } = process.cpuUsage();
  process.send!({ cpuMs: (user + system) / 1000, ...s3.received });
});
process.on("disconnect", () => s3.server.close(() => process.exit(0)));
