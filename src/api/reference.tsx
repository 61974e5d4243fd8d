import type { Child } from "hono/jsx";

/**
 * The REST API's reference page, rendered on the server from the same OpenAPI document that
 * `/openapi.json` serves: no scripts, nothing fetched from elsewhere.
 */
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: { type?: string; default?: unknown; minimum?: number; maximum?: number; maxLength?: number };
}
interface Operation {
  summary?: string;
  description?: string;
  parameters?: Parameter[];
  responses?: Record<string, { description?: string }>;
}
export interface OpenApiDocument {
  info: { title: string; version: string };
  paths?: Record<string, Record<string, Operation>>;
}

const styles = `
  body { font: 16px/1.55 system-ui, sans-serif; margin: 0; color: #1b1f24; background: #fff; }
  main { max-width: 52rem; margin: 2rem auto; padding: 0 1.25rem; }
  h2 { margin-top: 2.5rem; font-size: 1.15rem; } code { font-size: .95em; background: #f2f3f5; padding: .1em .3em; border-radius: 4px; }
  table { border-collapse: collapse; width: 100%; margin: .5rem 0; } th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #dde0e4; vertical-align: top; }
  .method { font-weight: 700; text-transform: uppercase; margin-right: .5rem; }
`;

function range(schema: Parameter["schema"]): string {
  if (!schema) return "";
  const parts = [schema.type ?? ""];
  if (schema.minimum !== undefined || schema.maximum !== undefined) parts.push(`${schema.minimum ?? ""}–${schema.maximum ?? ""}`);
  if (schema.maxLength !== undefined) parts.push(`≤ ${schema.maxLength} chars`);
  if (schema.default !== undefined) parts.push(`default ${JSON.stringify(schema.default)}`);
  return parts.filter(Boolean).join(", ");
}

function Endpoint(props: { method: string; path: string; operation: Operation }): Child {
  const { method, path, operation } = props;
  return (
    <section>
      <h2>
        <span class="method">{method}</span>
        <code>{path}</code>
      </h2>
      {operation.summary && (
        <p>
          <strong>{operation.summary}.</strong> {operation.description ?? ""}
        </p>
      )}
      {operation.parameters && operation.parameters.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>Parameter</th>
              <th>In</th>
              <th>Type</th>
              <th>Required</th>
            </tr>
          </thead>
          <tbody>
            {operation.parameters.map((p) => (
              <tr>
                <td>
                  <code>{p.name}</code>
                </td>
                <td>{p.in}</td>
                <td>{range(p.schema)}</td>
                <td>{p.required ? "yes" : "no"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <table>
        <thead>
          <tr>
            <th>Status</th>
            <th>Meaning</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(operation.responses ?? {}).map(([status, response]) => (
            <tr>
              <td>{status}</td>
              <td>{response.description ?? ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function ReferencePage(props: { document: OpenApiDocument }) {
  const { document } = props;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{document.info.title}</title>
        <style>{styles}</style>
      </head>
      <body>
        <main>
          <h1>
            {document.info.title} <small>{document.info.version}</small>
          </h1>
          <p>
            Every request carries a secret key as <code>Authorization: Bearer sk_…</code> (never in the URL) and counts as one request of
            the key's lookup limits; answers are JSON, errors <code>{'{"error": "<message>", "code": "<code>"}'}</code>. The
            machine-readable document is <a href="/openapi.json">/openapi.json</a>.
          </p>
          {Object.entries(document.paths ?? {}).flatMap(([path, methods]) =>
            Object.entries(methods).map(([method, operation]) => <Endpoint method={method} path={path} operation={operation} />),
          )}
        </main>
      </body>
    </html>
  );
}
