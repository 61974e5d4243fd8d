import { productionSecrets, varsSchema } from "../../env";

/** What `npm run deploy:check` checks in a wrangler configuration, without running anything. */
export interface DeploymentConfig {
  vars: Record<string, unknown>;
  observability?: { enabled?: boolean; redact_query_string?: boolean; logs?: { enabled?: boolean }; traces?: { enabled?: boolean } };
}

/**
 * Problems of a wrangler configuration and, when known (`--remote`: a real deployment), the
 * names of the secrets set on the Worker.
 */
export function deploymentProblems(config: DeploymentConfig, secretNames: string[] | null): string[] {
  const problems: string[] = [];
  const vars = varsSchema.safeParse(config.vars);
  if (!vars.success) problems.push(...vars.error.issues.map((issue) => `[vars] ${issue.path.join(".")}: ${issue.message}`));
  // Logs and traces are each turned on by their own setting as well as by `enabled`; either
  // keeps request URLs, which redact_query_string cuts for both.
  const { observability } = config;
  const recorded = observability?.enabled || observability?.logs?.enabled || observability?.traces?.enabled;
  if (recorded && observability?.redact_query_string !== true) {
    problems.push("[observability] redact_query_string must be true: request URLs in logs and traces would keep their query strings");
  }
  if (secretNames !== null) {
    // Only a real deployment (`--remote`) must name itself: a local server, and CI checking a
    // fresh clone, run with the shipped empty value.
    if (vars.success && !vars.data.PUBLIC_BASE_URL) {
      problems.push("[vars] PUBLIC_BASE_URL is empty (set it in wrangler.toml to the Worker's public address, e.g. https://logos.example.com): the Worker would name its URLs after each request's Host and never report a missing secret");
    }
    for (const [name, secret] of Object.entries(productionSecrets)) {
      if (secret.required && !secretNames.includes(name)) problems.push(`secret ${name} is not set (wrangler secret put ${name}): ${secret.without}`);
    }
  }
  return problems;
}
