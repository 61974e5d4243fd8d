import { readFileSync } from "node:fs";
import { join } from "node:path";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { inject } from "vitest";
import { importCompanyLogo } from "../../src/catalogue/importLogo";
import { prepareLogo } from "../../tools/importer/prepare";
import { projectRoot } from "../../tools/platform";
import { applyMigrations } from "../../tools/start/migrations";
import { createDb } from "../../src/lib/db";
import { ok } from "../../src/lib/errors";
import { sha256Hex } from "../../src/lib/encoding";
import { FAKE_STRIPE_SECRET_KEY, startFakeStripe } from "../fakes/stripeApi";
import { doneInBackground } from "../helpers/background";
import { workerOptions } from "../helpers/workerd";

/**
 * The Worker as a browser meets it: bundled as for deployment and run on workerd by Miniflare
 * with the real bindings of wrangler.toml (D1 with the migrations applied, R2, Durable
 * Objects, KV, Images) on a direct socket at http://127.0.0.1:<port>, in memory; Stripe is
 * the fake on loopback. The catalogue holds one real logo, GitHub's, prepared by the
 * importer's own image step and written through the catalogue's one write path.
 */
export const STRIPE_WEBHOOK_SECRET = "whsec_browser_0123456789abcdef";

export interface RunningWorker {
  base: string;
  stripe: string;
  /** The Worker's own D1 and R2, as the operator tools open a platform: what `npm run admin` works on. */
  storage: { d1: D1Database; bucket: R2Bucket };
  dispose(): Promise<void>;
}

export async function startWorker(): Promise<RunningWorker> {
  // Bundled once for every browser file, by the project's global setup (./bundle.ts): files
  // that bundled each into one folder side by side once read a bundle cut short.
  const bundle = inject("browserWorkerBundle");
  const [stripe] = await Promise.all([startFakeStripe(), doneInBackground(bundle)]);
  const dist = join(bundle, "dist");
  const mf = new Miniflare({
    ...convertV4MiniflareOptions({
      workers: [
        workerOptions(dist, "logo-lookup", {
          STRIPE_API_BASE: stripe.url,
          STRIPE_SECRET_KEY: FAKE_STRIPE_SECRET_KEY,
          STRIPE_WEBHOOK_SECRET,
          STRIPE_PRICE_LAUNCH: "price_launch_test",
          STRIPE_PRICE_GROWTH: "price_growth_test",
          SIGNED_URL_SECRET: "browser-test-signing-secret-0123456789",
        }),
      ],
    } as never),
  });
  try {
    const base = (await mf.unsafeGetDirectURL("logo-lookup")).origin;
    const d1 = (await mf.getD1Database("DB")) as unknown as D1Database;
    await applyMigrations(d1, join(projectRoot, "migrations"));
    const bucket = (await mf.getR2Bucket("LOGOS")) as unknown as R2Bucket;
    await addGitHub(d1, bucket);
    return {
      base,
      stripe: stripe.url,
      storage: { d1, bucket },
      dispose: async () => {
        await mf.dispose();
        stripe.server.close();
      },
    };
  } catch (error) {
    await mf.dispose();
    stripe.server.close();
    throw error;
  }
}

async function addGitHub(d1: D1Database, bucket: R2Bucket) {
  const svg = new Uint8Array(readFileSync(join(projectRoot, "node_modules", "simple-icons", "icons", "github.svg")));
  const prepared = await prepareLogo(svg);
  if (!prepared.ok) throw new Error(`preparing the GitHub logo: ${prepared.error}`);
  const imported = await importCompanyLogo(
    createDb(d1),
    bucket,
    {
      name: "GitHub",
      domains: ["github.com"],
      aliases: [],
      prominence: 100,
      variant: "icon",
      sourceSet: "simple-icons",
      licence: "CC0-1.0",
      sourceHash: await sha256Hex(svg),
    },
    async () => ok(prepared.logo),
  );
  if (!imported.ok) throw new Error(`importing the GitHub logo: ${imported.error.message}`);
}
