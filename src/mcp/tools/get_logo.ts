import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { shownName } from "../../catalogue/names";
import { assetUrl } from "../../images/assetUrls";
import { signAssetUrl } from "../../images/signedUrls";
import { deleteFile, uploadFile } from "../../files/fileApi";
import { base64Length } from "../../lib/encoding";
import { fail, ok } from "../../lib/errors";
import { admit, foundLogo, handOut } from "../admission";
import type { ToolContext } from "../context";
import {
  asMade,
  base64Within,
  type Delivery,
  deliveryRecord,
  logoFileName,
  MAX_BASE64_CHARS,
  MAX_UPLOAD_BASE64,
  readDelivered,
  readDeliveredBase64,
  TOO_LARGE,
} from "../delivery";
import { registerScopedTool, toolError, toolResult } from "../results";
import { deliveryRecordSchema, formatSchema, logoIdSchema, maxWidthSchema, nameSourceSchema, returnTypeSchema } from "../schemas";

/**
 * get_logo (spec 2): one logo by id. Seven-tool form: the delivery record with its public URL,
 * plus base64 data or the id of a file uploaded to the AI provider's file API. Three-tool form:
 * base64 (default) or a signed URL that expires in an hour.
 */
const FAILURE = "Failed to get logo. Try again later";

export function registerGetLogo(server: McpServer, ctx: ToolContext) {
  registerScopedTool(
    server,
    "get_logo",
    {
      title: "Get a logo",
      description:
        "Get a logo by its id from search results. Always returns the public image URL (PNG unless format asks for WebP, AVIF, JPEG " +
        "or the SVG vector); returnType 'base64' adds the image data, 'file' uploads the image to the AI provider's file API and returns its file_id (only for workflows set up to use that id; " +
        "falls back to base64 when the upload fails). maxWidth scales down only. Counts the company towards the daily unique-company quota.",
      inputSchema: z.object({
        logoId: logoIdSchema,
        maxWidth: maxWidthSchema.optional(),
        returnType: returnTypeSchema(["url", "base64", "file"]),
        format: formatSchema,
      }),
      outputSchema: deliveryRecordSchema.extend({ base64: z.string().optional(), file_id: z.string().optional() }),
      // `file` uploads a new file to the AI provider on each call, as insert_logo does: a
      // client that runs read-only tools unasked must ask first.
      annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: true },
      failure: FAILURE,
    },
    async (args) => {
      const found = await foundLogo(ctx, args.logoId);
      if (!found.ok) return toolError(found.error.message);
      const { company, logo } = found.value;
      const record = deliveryRecord(ctx.caller.base, company, logo, { maxWidth: args.maxWidth, format: args.format });
      if (args.returnType === "url") {
        const admitted = await admit(ctx, [company.companyId]);
        return admitted.ok ? toolResult(record, [record]) : toolError(admitted.error.message);
      }

      const limit = args.returnType === "file" ? MAX_UPLOAD_BASE64 : undefined;
      const delivered = await handOut<{ record: Delivery; answer: { file_id: string } | { base64: string } }>(
        ctx,
        [company.companyId],
        async () => {
          const image = await readDelivered(ctx, logo, args.maxWidth, { maxBase64: limit, format: args.format });
          if (!image.ok) return image;
          const made = asMade(record, image.value.contentType);
          if (args.returnType === "file") {
            const upload = await uploadFile(ctx.env, {
              bytes: image.value.bytes,
              filename: logoFileName(made.domain, made.logoId, made.format),
              mimeType: made.mimeType,
            });
            if (upload.ok) return ok({ record: made, answer: { file_id: upload.value.fileId } });
            // Spec: "on failure of the upload the result falls back to base64", within its 5 MB.
            if (base64Length(image.value.bytes.byteLength) > MAX_BASE64_CHARS) return fail("payload_too_large", TOO_LARGE);
          }
          const base64 = base64Within(ctx, image.value.bytes);
          return base64.ok ? ok({ record: made, answer: { base64: base64.value } }) : base64;
        },
        async ({ answer }) => ("file_id" in answer ? deleteFile(ctx.env, answer.file_id) : undefined),
      );
      if (!delivered.ok) return toolError(delivered.error.message);
      const { record: made, answer } = delivered.value.made;
      return toolResult({ ...made, ...answer }, [made]);
    },
  );
}

export function registerGetLogoThree(server: McpServer, ctx: ToolContext) {
  registerScopedTool(
    server,
    "get_logo",
    {
      title: "Get a logo",
      description:
        "Get a logo by its id from search results, as base64 PNG data (default) or as a signed URL valid for an hour (returnType 'url'). " +
        "Counts the company towards the daily unique-company quota.",
      inputSchema: z.object({ logoId: logoIdSchema, returnType: returnTypeSchema(["base64", "url"]) }),
      outputSchema: z.object({
        base64: z.string().optional(),
        url: z.string().optional(),
        expiresIn: z.number().optional(),
        mimeType: z.literal("image/png"),
        format: z.literal("png"),
        width: z.number(),
        height: z.number(),
        companyName: z.string(),
        nameSource: nameSourceSchema,
      }),
      failure: FAILURE,
    },
    async (args) => {
      const found = await foundLogo(ctx, args.logoId);
      if (!found.ok) return toolError(found.error.message);

      const { logo, company } = found.value;
      const common = {
        mimeType: "image/png" as const,
        format: "png" as const,
        width: logo.width,
        height: logo.height,
        companyName: shownName(company),
        nameSource: company.nameSource,
      };
      if (args.returnType === "url") {
        // Signed before the company is counted: a URL that could not be made hands nothing out.
        const signed = await signAssetUrl(ctx.env.SIGNED_URL_SECRET, assetUrl(ctx.caller.base, logo.masterKey));
        if (!signed.ok) return toolError(signed.error.message);
        const admitted = await admit(ctx, [company.companyId]);
        if (!admitted.ok) return toolError(admitted.error.message);
        return toolResult({ url: signed.value.url, expiresIn: signed.value.expiresIn, ...common });
      }
      const png = await handOut(ctx, [company.companyId], () => readDeliveredBase64(ctx, logo, undefined));
      return png.ok ? toolResult({ base64: png.value.made.base64, ...common }) : toolError(png.error.message);
    },
  );
}
