import { productionSecrets, varsSchema } from "../../env";

/** What `npm run deploy:check` checks in a wrangler configuration, without running anything. */
export interface DeploymentConfig {
  vars: Record<string, unknown>;
  observability?: { enabled?: boolean; redact_query_string?: boolean };
}

/** Problems of a wrangler configuration and, when known, the names of the secrets set on the Worker. */
export function deploymentProblems(config: DeploymentConfig, secretNames: string[] | null): string[] {
  const problems: string[] = [];
  const vars = varsSchema.safeParse(config.vars);
  if (!vars.success) problems.push(...vars.error.issues.map((issue) => `[vars] ${issue.path.join(".")}: ${issue.message}`));
  if (config.observability?.enabled && config.observability.redact_query_string !== true) {
    problems.push("[observability] redact_query_string must be true: request URLs in logs would keep their query strings");
  }
  if (secretNames !== null) {
    for (const [name, secret] of Object.entries(productionSecrets)) {
      if (secret.required && !secretNames.includes(name)) problems.push(`secret ${name} is not set (wrangler secret put ${name}): ${secret.without}`);
    }
  }
  return problems;
}
