import { type McpServer, ProtocolError, ProtocolErrorCode, ResourceNotFoundError, ResourceTemplate, UriTemplate, type Variables } from "@modelcontextprotocol/server";
import { toBase64 } from "../../lib/encoding";
import type { ToolContext } from "../context";
import { readImage, resourceUri, scaledWidth } from "../delivery";
import { MAX_WIDTH } from "../schemas";
import { admittedLogo } from "../admission";

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
    async (uri, variables) => {
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

      const admitted = await admittedLogo(ctx, Number(id));
      if (!admitted.ok) {
        if (admitted.error.code === "not_found") throw new ResourceNotFoundError(uri.href);
        throw new ProtocolError(ProtocolErrorCode.InvalidRequest, admitted.error.message);
      }
      const { logo } = admitted.value;

      const png = await readImage(ctx, logo, maxWidth);
      if (!png.ok) {
        throw new ProtocolError(
          ProtocolErrorCode.InternalError,
          png.reason === "too_large" ? "Rendered logo exceeds 5MB. Use the public URL or a lower maxWidth." : "Unable to retrieve image. Try again later",
        );
      }
      const width = scaledWidth(logo, maxWidth);
      return {
        contents: [
          {
            uri: resourceUri(logo.id, width),
            mimeType: "image/png",
            blob: toBase64(png.bytes),
          },
        ],
      };
    },
  );
}
