import type { D1Migration } from "cloudflare:test";

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
      /** Control address of the fake websites (test/fakes/websites.ts). */
      DISCOVERY_FAKE_SITES: string;
      /** Control address of the fake DNS-over-HTTPS resolver (test/fakes/dnsOverHttps.ts). */
      DNS_FAKE_CONTROL: string;
      /** Control address of the fake Cloudflare purge API (test/fakes/cdnPurgeApi.ts). */
      CDN_PURGE_FAKE_CONTROL: string;
    }
  }
}
