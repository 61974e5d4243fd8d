import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { FAKE_FILES_API_KEY, startFakeFilesApi } from "./test/fakes/filesApi";
import { FAKE_STRIPE_SECRET_KEY, startFakeStripe } from "./test/fakes/stripeApi";
import { startFakeWebsites } from "./test/fakes/websites";

// Two projects: the Worker's tests run inside workerd with real D1, R2, Durable Objects,
// KV and Images under Miniflare; the operator tools (importer, admin CLI) are Node programs
// and are tested as such, as subprocesses against a Miniflare-persisted local state.
export default defineConfig({
  test: {
    projects: [
      {
        plugins: [
          cloudflareTest(async () => {
            // Outside services run as small HTTP servers on 127.0.0.1 speaking their real wire format.
            const [filesApi, stripe, websites] = await Promise.all([startFakeFilesApi(), startFakeStripe(), startFakeWebsites()]);
            return {
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                bindings: {
                  TEST_MIGRATIONS: await readD1Migrations("./migrations"),
                  ANTHROPIC_BASE_URL: filesApi.url,
                  ANTHROPIC_API_KEY: FAKE_FILES_API_KEY,
                  SIGNED_URL_SECRET: "test-signed-url-secret-0123456789abcdef",
                  STRIPE_API_BASE: stripe.url,
                  STRIPE_SECRET_KEY: FAKE_STRIPE_SECRET_KEY,
                  STRIPE_WEBHOOK_SECRET: "whsec_test_0123456789abcdef",
                  STRIPE_PRICE_LAUNCH: "price_launch_test",
                  STRIPE_PRICE_GROWTH: "price_growth_test",
                  DISCOVERY_RESOLVE: websites.resolve,
                  DISCOVERY_FAKE_SITES: websites.controlUrl,
                },
              },
            };
          }),
        ],
        test: {
          name: "worker",
          include: ["test/**/*.test.ts"],
          exclude: ["test/cli/**", "test/browser/**"],
          setupFiles: ["./test/helpers/applyMigrations.ts"],
        },
      },
      {
        test: {
          name: "cli",
          include: ["test/cli/**/*.test.ts"],
          environment: "node",
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // Each test file works on its own temporary state directory.
          fileParallelism: true,
        },
      },
      {
        // Chromium (playwright-core) against the Worker on workerd: test/browser/.
        test: { name: "browser", include: ["test/browser/**/*.test.ts"], environment: "node", testTimeout: 60_000, hookTimeout: 120_000 },
      },
    ],
  },
});
