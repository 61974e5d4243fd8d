import { readFileSync, writeFileSync } from "node:fs";
import { productionSecrets } from "../../src/env";
import type { CloudflareApi } from "./cloudflareApi";

/**
 * What a deployment needs on the Cloudflare account before `wrangler deploy`: the D1 database,
 * the R2 bucket, the KV namespace and the queue wrangler.toml names, their ids written where
 * wrangler reads them (wrangler.toml), and the Worker's secrets. Each is looked up first and
 * made only when missing, so a second run changes nothing; a dry run only looks.
 */
export interface DeploymentResources {
  /** The Worker's name (`name`), whose secrets these are. */
  worker: string;
  database: { binding: string; name: string; id: string | undefined };
  bucket: { name: string };
  kv: { binding: string; id: string | undefined };
  queue: { name: string };
}

export type Action =
  | { kind: "found" | "create"; resource: "database" | "bucket" | "kv" | "queue"; name: string; id?: string }
  | { kind: "write-id"; binding: string; id: string }
  | { kind: "secret-set" | "secret-missing"; name: string; required: boolean; from?: "environment" | "prompt" | "generated" }
  | { kind: "secret-present"; name: string };

export interface ProvisionOptions {
  api: CloudflareApi;
  accountId: string;
  /** The wrangler.toml the ids are read from and written to. */
  configPath: string;
  resources: DeploymentResources;
  /** Where a missing secret's value may come from: the environment (the secret's own name). */
  environment: Record<string, string | undefined>;
  /** Asks the operator for a secret (a terminal's hidden prompt), or undefined when none is at hand. */
  ask?: (name: string, why: string) => Promise<string | undefined>;
  /** Makes the value of a secret that is only a random key (SIGNED_URL_SECRET). */
  generate?: () => string;
  /** Look, report what would be done, change nothing. */
  dryRun: boolean;
}

/** Secrets whose value may simply be made: keys the Worker signs with, no one else's. */
const GENERATED = new Set(["SIGNED_URL_SECRET"]);

const placeholder = (id: string | undefined) => !id || /^[0-]+$/.test(id);

export interface Provisioned {
  actions: Action[];
  /** The secrets to upload with the deploy (`wrangler deploy --secrets-file`): never written to a log. */
  secrets: Record<string, string>;
}

export async function provision(options: ProvisionOptions): Promise<Provisioned> {
  const { api, accountId, resources, dryRun } = options;
  const account = `/accounts/${encodeURIComponent(accountId)}`;
  const actions: Action[] = [];
  const secrets: Record<string, string> = {};

  // D1: by name; its id goes into wrangler.toml.
  const databases =
    (await api.get<{ uuid: string; name: string }[]>(`${account}/d1/database?name=${encodeURIComponent(resources.database.name)}`)) ?? [];
  let database = databases.find((d) => d.name === resources.database.name);
  if (database) actions.push({ kind: "found", resource: "database", name: database.name, id: database.uuid });
  else {
    actions.push({ kind: "create", resource: "database", name: resources.database.name });
    if (!dryRun) database = await api.post<{ uuid: string; name: string }>(`${account}/d1/database`, { name: resources.database.name });
  }

  // R2: a bucket is named, not numbered.
  const bucket = await api.get(`${account}/r2/buckets/${encodeURIComponent(resources.bucket.name)}`);
  if (bucket) actions.push({ kind: "found", resource: "bucket", name: resources.bucket.name });
  else {
    actions.push({ kind: "create", resource: "bucket", name: resources.bucket.name });
    if (!dryRun) await api.post(`${account}/r2/buckets`, { name: resources.bucket.name });
  }

  // KV: by title (the Worker's name and the binding's, as wrangler titles the namespaces it makes).
  const title = `${resources.worker}-${resources.kv.binding}`;
  const namespaces = (await api.get<{ id: string; title: string }[]>(`${account}/storage/kv/namespaces?per_page=100`)) ?? [];
  let namespace = namespaces.find((n) => n.title === title || n.id === resources.kv.id);
  if (namespace) actions.push({ kind: "found", resource: "kv", name: namespace.title, id: namespace.id });
  else {
    actions.push({ kind: "create", resource: "kv", name: title });
    if (!dryRun) namespace = await api.post<{ id: string; title: string }>(`${account}/storage/kv/namespaces`, { title });
  }

  // The queue discoveries finish on.
  const queues = (await api.get<{ queue_id: string; queue_name: string }[]>(`${account}/queues`)) ?? [];
  const queue = queues.find((q) => q.queue_name === resources.queue.name);
  if (queue) actions.push({ kind: "found", resource: "queue", name: queue.queue_name, id: queue.queue_id });
  else {
    actions.push({ kind: "create", resource: "queue", name: resources.queue.name });
    if (!dryRun) await api.post(`${account}/queues`, { queue_name: resources.queue.name });
  }

  // The ids where wrangler reads them, only where they differ.
  const ids: Record<string, string | undefined> = {
    [resources.database.binding]: database?.uuid,
    [resources.kv.binding]: namespace?.id,
  };
  const current: Record<string, string | undefined> = {
    [resources.database.binding]: resources.database.id,
    [resources.kv.binding]: resources.kv.id,
  };
  for (const [binding, id] of Object.entries(ids)) {
    if (id && (placeholder(current[binding]) || current[binding] !== id)) actions.push({ kind: "write-id", binding, id });
  }
  const writes = actions.filter((a): a is Extract<Action, { kind: "write-id" }> => a.kind === "write-id");
  if (!dryRun && writes.length > 0) {
    const text = readFileSync(options.configPath, "utf8");
    writeFileSync(options.configPath, withIds(text, Object.fromEntries(writes.map((w) => [w.binding, w.id]))));
  }

  // Secrets: those the Worker has are left alone; a missing one comes from the environment, a
  // prompt, or (a signing key) is made; a required one that cannot be had is reported.
  const script = `${account}/workers/scripts/${encodeURIComponent(resources.worker)}`;
  const present = new Set(((await api.get<{ name: string }[]>(`${script}/secrets`)) ?? []).map((s) => s.name));
  for (const [name, secret] of Object.entries(productionSecrets)) {
    if (present.has(name)) {
      actions.push({ kind: "secret-present", name });
      continue;
    }
    let value = options.environment[name];
    let from: "environment" | "prompt" | "generated" | undefined = value ? "environment" : undefined;
    if (!value && GENERATED.has(name) && options.generate) {
      value = dryRun ? "" : options.generate();
      from = "generated";
    }
    if (!value && !from && options.ask && !dryRun) {
      value = await options.ask(name, secret.without);
      if (value) from = "prompt";
    }
    if (!from) {
      actions.push({ kind: "secret-missing", name, required: secret.required });
      continue;
    }
    actions.push({ kind: "secret-set", name, required: secret.required, from });
    if (value) secrets[name] = value;
  }
  return { actions, secrets };
}

/**
 * wrangler.toml with the given bindings' ids written in: `database_id` in the `[[d1_databases]]`
 * block of that binding, `id` in its `[[kv_namespaces]]` block. Everything else, comments
 * included, stays as it was.
 */
export function withIds(toml: string, ids: Record<string, string>): string {
  const lines = toml.split("\n");
  let table = "";
  let binding: string | undefined;
  const blocks: { table: string; binding: string | undefined; start: number; end: number }[] = [];
  lines.forEach((line, i) => {
    const header = /^\s*\[\[?([\w.]+)\]?\]\s*$/.exec(line);
    if (header) {
      if (blocks.length > 0) blocks.at(-1)!.end = i;
      table = header[1]!;
      binding = undefined;
      blocks.push({ table, binding, start: i, end: lines.length });
      return;
    }
    const named = /^\s*binding\s*=\s*"([^"]+)"/.exec(line);
    if (named && blocks.length > 0) blocks.at(-1)!.binding = named[1];
  });
  for (const block of blocks) {
    const id = block.binding ? ids[block.binding] : undefined;
    if (!id) continue;
    const key = block.table === "d1_databases" ? "database_id" : block.table === "kv_namespaces" ? "id" : null;
    if (!key) continue;
    const line = `${key} = "${id}"`;
    const at = lines.slice(block.start, block.end).findIndex((l) => new RegExp(`^\\s*${key}\\s*=`).test(l));
    if (at >= 0) lines[block.start + at] = line;
    else lines.splice(block.start + 1, 0, line);
  }
  return lines.join("\n");
}
