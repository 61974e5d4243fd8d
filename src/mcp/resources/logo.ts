import {
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
  UriTemplate,
  type Variables,
} from "@modelcontextprotocol/server";
import type { ToolContext } from "../context";
import { base64Within, readImage, resourceUri, scaledWidth } from "../delivery";
import { MAX_WIDTH } from "../schemas";
import { foundLogo, handOut } from "../admission";
import { log } from "../../lib/log";

/**
 * Resource `qt://logo/{logoId}{?maxWidth}` (spec "Resource URI", "Resource read"): the logo's
 * PNG, scaled down to maxWidth, as a base64 blob. Reading hands out the logo itself, so it
 * counts the company towards the unique-company quota like the tools that do.
 */
const TEMPLATE = "qt://logo/{logoId}{?maxWidth}";

/**
 * The SDK's template matcher treats `{?maxWidth}` as required, so `qt://logo/42` would not
 * match (modelcontextprotocol/typescript-sdk#1079). RFC 6570 query parameters are optional:
 * this matcher reads the id from the path and any query parameters in any order.
 */
class LogoUriTemplate extends UriTemplate {
  override match(uri: string): Variables | null {
    const parts = /^qt:\/\/logo\/([^/?#]+)(?:\?([^#]*))?$/.exec(uri);
    if (!parts) return null;
    // Taken as written: an id is digits, and anything else (`%ZZ` included) is simply no logo.
    const variables: Variables = { logoId: parts[1]! };
    const maxWidth = new URLSearchParams(parts[2] ?? "").get("maxWidth");
    if (maxWidth !== null) variables.maxWidth = maxWidth;
    return variables;
  }
}

const single = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

export function registerLogoResource(server: McpServer, ctx: ToolContext) {
  server.registerResource(
    "logo",
    new ResourceTemplate(new LogoUriTemplate(TEMPLATE), { list: undefined }),
    {
      title: "Company logo",
      description: "A logo as PNG, by the logo id from search results; ?maxWidth=N (1-3200) scales it down.",
      mimeType: "image/png",
    },
    (uri, variables) =>
      readLogo(ctx, uri, variables).catch((error: unknown) => {
        // The protocol's own errors are the answer; anything else (the catalogue failing) is
        // logged, and the client gets the spec's generic message, never the detail.
        if (error instanceof ProtocolError) throw error;
        log.error("mcp.resource_read_failed", { error });
        throw new ProtocolError(ProtocolErrorCode.InternalError, "Failed to get logo. Try again later");
      }),
  );
}

async function readLogo(ctx: ToolContext, uri: URL, variables: Variables) {
  const id = single(variables.logoId) ?? "";
  if (!/^[1-9]\d{0,15}$/.test(id)) throw new ResourceNotFoundError(uri.href);
  const rawWidth = single(variables.maxWidth);
  let maxWidth: number | undefined;
  if (rawWidth !== undefined) {
    maxWidth = /^\d{1,4}$/.test(rawWidth) ? Number(rawWidth) : Number.NaN;
    if (!(maxWidth >= 1 && maxWidth <= MAX_WIDTH)) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `maxWidth must be a whole number from 1 to ${MAX_WIDTH}`);
    }
  }

  const found = await foundLogo(ctx, Number(id));
  if (!found.ok) throw new ResourceNotFoundError(uri.href);
  const { logo } = found.value;
  const png = await handOut(ctx, [found.value.company.companyId], async () => {
    const read = await readImage(ctx, logo, maxWidth);
    if (read.ok) return base64Within(ctx, read.bytes);
    // Thrown from inside, so a failed read is never admitted.
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      read.reason === "too_large"
        ? "Rendered logo exceeds 5MB. Use the public URL or a lower maxWidth."
        : "Unable to retrieve image. Try again later",
    );
  });
  if (!png.ok) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, png.error.message);
  const width = scaledWidth(logo, maxWidth);
  return {
    contents: [
      {
        uri: resourceUri(logo.id, width),
        mimeType: "image/png",
        blob: png.value.made,
      },
    ],
  };
}
