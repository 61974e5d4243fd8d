import type { Plan } from "../../schema";
import { planLimits } from "../limits/plans";
import { count } from "./format";

/** What the pages call each plan. */
export const planNames: Record<Plan, string> = {
  free: "Free",
  launch: "Launch",
  growth: "Growth",
  enterprise: "Enterprise",
};

/** A plan's monthly price as the pages show it: what billing charges is its Stripe Price. */
export function planPrice(plan: Plan): string {
  const usd = planLimits[plan].monthlyUsd;
  if (usd === null) return "Custom";
  return usd === 0 ? "Free" : `$${count(usd)} a month`;
}

function mcpLine(plan: Plan): string {
  const { perDay, perMinute } = planLimits[plan].mcp;
  return perDay !== null ? `${count(perDay)} MCP calls a day` : `${count(perMinute ?? 0)} MCP calls a minute`;
}

/** A plan's limits, from the one place every limiter reads them (src/limits/plans.ts). */
export function PlanLimits(props: { plan: Plan }) {
  const limits = planLimits[props.plan];
  return (
    <ul>
      <li>{count(limits.lookup.perMonth)} lookups a month</li>
      <li>{count(limits.lookup.perMinute)} lookups a minute per key</li>
      <li>{mcpLine(props.plan)}</li>
      <li>{count(limits.companiesPerDay)} companies a day through MCP</li>
    </ul>
  );
}
