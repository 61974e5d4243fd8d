/**
 * Bindings that fail, or never answer, the way an outage of D1, R2, KV, the Images binding or
 * a Durable Object would. Handed to the Worker in place of the real ones (test/lookup/helpers
 * fetchWith); everything else stays real.
 */
export type Fault = "fails" | "hangs";

const outcome = <T = never>(fault: Fault, what: string): Promise<T> =>
  fault === "fails" ? Promise.reject(new Error(`${what}: injected outage`)) : new Promise<T>(() => undefined);

export function brokenDatabase(fault: Fault): D1Database {
  const statement: Record<string, unknown> = {};
  statement.bind = () => statement;
  for (const method of ["all", "run", "raw", "first"]) statement[method] = () => outcome(fault, `D1 ${method}`);
  return {
    prepare: () => statement,
    batch: () => outcome(fault, "D1 batch"),
    exec: () => outcome(fault, "D1 exec"),
  } as unknown as D1Database;
}

export function brokenBucket(fault: Fault): R2Bucket {
  const methods = ["head", "get", "put", "delete", "list"];
  return Object.fromEntries(methods.map((m) => [m, () => outcome(fault, `R2 ${m}`)])) as unknown as R2Bucket;
}

export function brokenImages(fault: Fault): ImagesBinding {
  const chain = { transform: () => chain, draw: () => chain, output: () => outcome(fault, "Images output") };
  return { input: () => chain, info: () => outcome(fault, "Images info") } as unknown as ImagesBinding;
}

export function brokenKv(fault: Fault): KVNamespace {
  const methods = ["get", "getWithMetadata", "put", "delete", "list"];
  return Object.fromEntries(methods.map((m) => [m, () => outcome(fault, `KV ${m}`)])) as unknown as KVNamespace;
}

/** A Durable Object namespace whose objects do not answer any call. */
export function brokenObjects<T extends { idFromName(name: string): DurableObjectId; get(id: DurableObjectId): unknown }>(
  real: T,
  fault: Fault,
  /** Which objects fail, by name: every one unless told. */
  broken: (name: string) => boolean = () => true,
): T {
  const stub = new Proxy({}, { get: () => () => outcome(fault, "Durable Object call") });
  const failing = new Set<string>();
  return {
    idFromName: (name: string) => {
      const id = real.idFromName(name);
      if (broken(name)) failing.add(id.toString());
      return id;
    },
    get: (id: DurableObjectId) => (failing.has(id.toString()) ? stub : real.get(id)),
  } as unknown as T;
}

/**
 * The real database, except that the first `times` reads fail the way D1 reports a transient
 * fault (and, locally, another process holding SQLite's write lock): "internal error".
 */
export function flakyDatabase(real: D1Database, times: number): D1Database & { failed: () => number } {
  let failed = 0;
  const statement = (inner: D1PreparedStatement): D1PreparedStatement => {
    const read =
      <T>(work: () => Promise<T>) =>
      () => {
        if (failed < times) {
          failed++;
          return Promise.reject(new Error("D1_ERROR: Failed to get session commit token: internal error; reference = test"));
        }
        return work();
      };
    return {
      bind: (...values: unknown[]) => statement(inner.bind(...values)),
      first: (column?: string) => read(() => (column === undefined ? inner.first() : inner.first(column)))(),
      all: () => read(() => inner.all())(),
      raw: (options?: { columnNames?: boolean }) => read(() => inner.raw(options as { columnNames?: false }))(),
      run: () => inner.run(),
    } as unknown as D1PreparedStatement;
  };
  return {
    prepare: (query: string) => statement(real.prepare(query)),
    batch: (statements: D1PreparedStatement[]) => real.batch(statements),
    exec: (query: string) => real.exec(query),
    withSession: (constraint?: D1SessionConstraint) => real.withSession(constraint),
    failed: () => failed,
  } as unknown as D1Database & { failed: () => number };
}
