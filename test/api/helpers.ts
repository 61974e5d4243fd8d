import { exports } from "cloudflare:workers";
import { addAccount, addCompany, addKey } from "../helpers/catalogue";
import { darkLogo40x20 } from "../fixtures/images";

export const BASE = "https://logos.test";

export function rest(path: string, key?: string, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  if (key) headers.set("Authorization", `Bearer ${key}`);
  return exports.default.fetch(`${BASE}${path}`, { ...init, headers });
}

export async function secretKeyFor(plan: "free" | "launch" | "growth" | "enterprise" = "launch", options: { perMinute?: number } = {}) {
  const account = await addAccount(plan);
  const key = await addKey(account.id, { type: "secret", ...options });
  return { account, key };
}

/** An ISIN its check digit passes, held by the test's Stripe. */
export const STRIPE_ISIN = "US8631111007";

export async function stripe() {
  const icon = await addCompany(
    {
      name: "Stripe",
      domains: ["stripe.com", "stripe.dev"],
      aliases: ["Stripe Inc"],
      ticker: { symbol: "STRP", exchange: "NYSE" },
      identifiers: [
        { scheme: "isin", value: STRIPE_ISIN },
        { scheme: "crypto", value: "STRP" },
      ],
      brandColor: "#635bff",
      prominence: 5,
    },
    darkLogo40x20(),
  );
  const full = await addCompany(
    {
      name: "Stripe",
      domains: ["stripe.com", "stripe.dev"],
      variant: "full",
      ticker: { symbol: "STRP", exchange: "NYSE" },
      brandColor: "#635bff",
      prominence: 5,
    },
    {
      ...darkLogo40x20(),
      contentHash: "f".repeat(64),
    },
  );
  return { companyId: icon.companyId, icon: icon.logoId, full: full.logoId };
}
