import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { FAKE_FILES_API_KEY, startFakeFilesApi } from "./test/fakes/filesApi";
import { FAKE_MAIL_FROM, FAKE_MAIL_TOKEN, startFakeMailApi } from "./test/fakes/mailApi";
import { FAKE_STRIPE_SECRET_KEY, startFakeStripe } from "./test/fakes/stripeApi";
import { startFakeWebsites } from "./test/fakes/websites";
import { startFakeDns } from "./test/fakes/dnsOverHttps";
import { startFakeCdnPurge } from "./test/fakes/cdnPurgeApi";
import { scratchSpaceInMemory } from "./test/helpers/scratchSpace";
import { ProjectOrderSequencer } from "./test/helpers/sequencer";

// Temporary files, Miniflare's storage among them, go to a RAM disk where there is one (Linux's
// /dev/shm); Chromium still unpacks itself into the system's temporary folder, once.
const systemTmpdir = scratchSpaceInMemory();

// Two projects: the Worker's tests run inside workerd with real D1, R2, Durable Objects,
// KV and Images under Miniflare; the operator tools (importer, admin CLI) are Node programs
// and are tested as such, in-process or as subprocesses, against a Miniflare-persisted local state.
export default defineConfig({
  test: {
    // Vitest's default on two cores is one file at a time; the cli files mostly wait on
    // workerd and subprocesses, so they overlap well with the Worker's.
    maxWorkers: 2,
    // The Worker's files first, the tools' last (test/helpers/sequencer.ts).
    sequence: { sequencer: ProjectOrderSequencer },
    // The Worker's access log, a line per request (src/lib/context.ts), would bury what a
    // failing test says; tests that look at it spy on the console inside the Worker.
    onConsoleLog: (log) => !log.includes('"event":"request"'),
    projects: [
      {
        plugins: [
          cloudflareTest(async () => {
            // Outside services run as small HTTP servers on 127.0.0.1 speaking their real wire format.
            const [filesApi, stripe, websites, dns, mail, cdnPurge] = await Promise.all([
              startFakeFilesApi(),
              startFakeStripe(),
              startFakeWebsites(),
              startFakeDns(),
              startFakeMailApi(),
              startFakeCdnPurge(),
            ]);
            return {
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                bindings: {
                  TEST_MIGRATIONS: await readD1Migrations("./migrations"),
                  // The deployment's addresses in wrangler.toml are not the tests' (tests that
                  // need one set it per call).
                  PUBLIC_BASE_URL: "",
                  CDN_URL: "",
                  ANTHROPIC_BASE_URL: filesApi.url,
                  ANTHROPIC_API_KEY: FAKE_FILES_API_KEY,
                  SIGNED_URL_SECRET: "test-signed-url-secret-0123456789abcdef",
                  STRIPE_API_BASE: stripe.url,
                  STRIPE_SECRET_KEY: FAKE_STRIPE_SECRET_KEY,
                  STRIPE_WEBHOOK_SECRET: "whsec_test_0123456789abcdef",
                  STRIPE_PRICE_LAUNCH: "price_launch_test",
                  STRIPE_PRICE_GROWTH: "price_growth_test",
                  MAIL_API_BASE: mail.url,
                  MAIL_API_TOKEN: FAKE_MAIL_TOKEN,
                  MAIL_FROM: FAKE_MAIL_FROM,
                  DISCOVERY_RESOLVE: websites.resolve,
                  DISCOVERY_FAKE_SITES: websites.controlUrl,
                  DNS_RESOLVER_URL: `${dns.url}/dns-query`,
                  DNS_FAKE_CONTROL: dns.url,
                  // No zone is configured (wrangler.toml): tests that purge a CDN set one per call.
                  CLOUDFLARE_API_BASE: `${cdnPurge.url}/client/v4`,
                  CDN_PURGE_FAKE_CONTROL: cdnPurge.url,
                },
              },
            };
          }),
        ],
        test: {
          name: "worker",
          include: ["test/**/*.test.ts"],
          exclude: ["test/tools/**", "test/browser/**", "test/**/*.node.test.ts"],
          setupFiles: ["./test/helpers/setup.ts"],
          // A runtime serves file after file instead of a fresh Miniflare and module graph per
          // file (about 2 s each, most of the suite's time). Storage is reset before every test,
          // isolate memory and the fake sites before every file (setup.ts). A runtime runs one
          // file at a time (its storage is the runtime's: a file running beside another had its
          // rows reset under it). Up to maxWorkers runtimes, each with its own storage and fakes
          // (the options function above runs once per runtime), share the cores with the
          // other projects' files: vitest runs the projects in one group, so that no core idles
          // while the other works through a project alone.
          isolate: false,
          // A test that loops thousands of times (test/limits) can take seconds on a loaded
          // machine: a hang still fails, and a slow machine does not.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: "tools",
          // The operator tools, and any room's tests that need Node itself (`*.node.test.ts`).
          include: ["test/tools/**/*.test.ts", "test/**/*.node.test.ts"],
          environment: "node",
          testTimeout: 120_000,
          hookTimeout: 120_000,
          globalSetup: ["./test/helpers/toolsState.ts"],
          // Each test file works on its own temporary state directory. Files share a process
          // (wrangler alone takes seconds to load, once per file otherwise).
          fileParallelism: true,
          isolate: false,
        },
      },
      {
        // Chromium (playwright-core) against the Worker on workerd: test/browser/.
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          environment: "node",
          env: { TMPDIR: systemTmpdir },
          globalSetup: ["./test/browser/bundle.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
