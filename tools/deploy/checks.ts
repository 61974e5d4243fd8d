import { productionSecrets, varsSchema } from "../../src/env";
import { normaliseDomain } from "../../src/lib/domain";

/** An https address under a public domain: not localhost, an IP address or a private name (`.internal`). */
function publicHttps(address: string): boolean {
  const url = new URL(address);
  return url.protocol === "https:" && normaliseDomain(url.hostname).ok;
}

/** What `npm run deploy:check` checks in a wrangler configuration, without running anything. */
export interface DeploymentConfig {
  vars: Record<string, unknown>;
  d1_databases?: { binding: string; database_id?: string }[];
  kv_namespaces?: { binding: string; id?: string }[];
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
      problems.push(
        "[vars] PUBLIC_BASE_URL is empty (set it in wrangler.toml to the Worker's public address, e.g. https://logos.example.com): the Worker would name its URLs after each request's Host and never report a missing secret",
      );
    } else if (vars.success && !publicHttps(vars.data.PUBLIC_BASE_URL)) {
      problems.push(
        "[vars] PUBLIC_BASE_URL must be the Worker's public https address: MCP clients refuse an OAuth issuer over http, and a local address reaches nobody",
      );
    }
    // Local addresses are for the tests' stand-ins; a deployment reaches the real services,
    // and lookups redirect to the CDN zone for the world to follow.
    if (vars.success) {
      const addresses = {
        STRIPE_API_BASE: vars.data.STRIPE_API_BASE,
        ANTHROPIC_BASE_URL: vars.data.ANTHROPIC_BASE_URL,
        CDN_URL: vars.data.CDN_URL,
      };
      for (const [name, address] of Object.entries(addresses)) {
        if (address && !publicHttps(address))
          problems.push(
            `[vars] ${name} must be a public https address in a deployment (${name === "CDN_URL" ? "lookups would redirect browsers to it" : "the Worker would call it in production"}), or left out for the default`,
          );
      }
    }
    // The ids wrangler.toml ships with stand for the resources `wrangler d1 create` and `wrangler kv namespace create` make.
    const placeholder = (id: string | undefined) => !id || /^[0-]+$/.test(id);
    for (const database of config.d1_databases ?? []) {
      if (placeholder(database.database_id))
        problems.push(
          `[d1_databases] ${database.binding}: database_id is the shipped placeholder (create the database and put its id in wrangler.toml; docs/deploying.md)`,
        );
    }
    for (const namespace of config.kv_namespaces ?? []) {
      if (placeholder(namespace.id))
        problems.push(
          `[kv_namespaces] ${namespace.binding}: id is the shipped placeholder (create the namespace and put its id in wrangler.toml; docs/deploying.md)`,
        );
    }
    for (const [name, secret] of Object.entries(productionSecrets)) {
      if (secret.required && !secretNames.includes(name))
        problems.push(`secret ${name} is not set (wrangler secret put ${name}): ${secret.without}`);
    }
  }
  return problems;
}
