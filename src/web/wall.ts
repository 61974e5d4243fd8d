/**
 * The wall's companies, the best known first. Each is shown only if this deployment's catalogue
 * holds it (a self-hosted catalogue may hold others); each is resolved as a lookup is, through
 * the isolate and the Cache API, so the page costs D1 nothing once warm. A module of its own: the
 * local seed decides these logos' themes at import (tools/seed/seed.ts), so the page answers at once.
 */
export const WALL_DOMAINS = [
  "github.com",
  "stripe.com",
  "google.com",
  "apple.com",
  "microsoft.com",
  "amazon.com",
  "netflix.com",
  "spotify.com",
  "slack.com",
  "shopify.com",
  "airbnb.com",
  "openai.com",
  "nvidia.com",
  "figma.com",
  "notion.so",
  "cloudflare.com",
  "paypal.com",
  "ibm.com",
  "intel.com",
  "adobe.com",
  "uber.com",
  "visa.com",
  "mastercard.com",
  "youtube.com",
];
