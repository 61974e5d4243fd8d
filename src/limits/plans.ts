import type { Plan } from "../../schema";

/**
 * Every limit of every plan, in one place; each limiter reads its figure from here, so a
 * plan change applies on the next request.
 *
 * Lookup figures beyond the Free quota are ours (the spec gives only "Free: 500,000 a
 * month"); MCP figures are the spec's ("Agent endpoint plans").
 */
export interface PlanLimits {
  /**
   * The monthly price shown on the portal, in US dollars; null is "talk to us". What is
   * charged is the Stripe Price of the plan (STRIPE_PRICE_*): keep the two in step.
   */
  monthlyUsd: number | null;
  lookup: { perMonth: number; perMinute: number };
  /** MCP: whether the plan includes it (all four do), and its request limits; null is none. */
  mcp: { access: boolean; perDay: number | null; perDayThreeTool: number | null; perMinute: number | null };
  /**
   * Unique companies per UTC day through the MCP tools. The spec gives Free's 30; the paid
   * figures are ours, and Enterprise's ("custom") is a default an operator may raise.
   */
  companiesPerDay: number;
  /**
   * Discoveries an account may start per UTC day: lookups, REST and tools of domains neither
   * catalogued nor remembered as misses. Each asks a stranger's site for up to a hundred URLs,
   * so without a bound any key could make the service crawl whatever sites it names.
   */
  discoveriesPerDay: number;
}

export const planLimits: Record<Plan, PlanLimits> = {
  free: {
    monthlyUsd: 0,
    lookup: { perMonth: 500_000, perMinute: 600 },
    mcp: { access: true, perDay: 50, perDayThreeTool: 20, perMinute: null },
    companiesPerDay: 30,
    discoveriesPerDay: 500,
  },
  launch: {
    monthlyUsd: 29,
    lookup: { perMonth: 5_000_000, perMinute: 3_000 },
    mcp: { access: true, perDay: null, perDayThreeTool: null, perMinute: 1_000 },
    companiesPerDay: 1_000,
    discoveriesPerDay: 5_000,
  },
  growth: {
    monthlyUsd: 99,
    lookup: { perMonth: 25_000_000, perMinute: 20_000 },
    mcp: { access: true, perDay: null, perDayThreeTool: null, perMinute: 10_000 },
    companiesPerDay: 10_000,
    discoveriesPerDay: 50_000,
  },
  enterprise: {
    monthlyUsd: null,
    lookup: { perMonth: 250_000_000, perMinute: 100_000 },
    mcp: { access: true, perDay: null, perDayThreeTool: null, perMinute: 100_000 },
    companiesPerDay: 100_000,
    discoveriesPerDay: 200_000,
  },
};
