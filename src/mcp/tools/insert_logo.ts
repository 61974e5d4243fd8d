import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { shownName } from "../../catalogue/names";
import { deleteFile, uploadFile } from "../../files/fileApi";
import { fail, ok } from "../../lib/errors";
import { bestMatch, handOut, usageMeta } from "../admission";
import type { ToolContext } from "../context";
import { logoFileName, MAX_UPLOAD_BASE64, readImage } from "../delivery";
import { registerScopedTool, toolError, toolResult } from "../results";
import { nameSourceSchema, querySchema, usageMetaSchema } from "../schemas";

/**
 * insert_logo (spec 2, seven-tool form): finds a company's logo, preferring the wordmark, and
 * prepares it for a presentation agent: the PNG is uploaded to the AI provider's file API and
 * the agent gets step-by-step instructions (store_blob, then execute_office_js with an
 * Office.js snippet placing the image). The image travels by file id; the instructions never
 * embed base64.
 */
const points = (name: string, min: number) =>
  z
    .number({ message: `${name} must be a number of points from ${min} to 10000` })
    .min(min, `${name} must be a number of points from ${min} to 10000`)
    .max(10_000, `${name} must be a number of points from ${min} to 10000`);

const inputSchema = z.object({
  query: querySchema.describe("Company name, domain or stock ticker"),
  imageWidth: points("imageWidth", 1).default(150).describe("Width on the slide in points (default 150)"),
  imageHeight: points("imageHeight", 1).optional().describe("Height in points; from the logo's aspect ratio when omitted"),
  imageLeft: points("imageLeft", 0).default(300).describe("Distance from the slide's left edge in points (default 300)"),
  imageTop: points("imageTop", 0).default(200).describe("Distance from the slide's top edge in points (default 200)"),
});

const round2 = (n: number) => Math.round(n * 100) / 100;

/** Office.js: put the stored image into the current slide at the given place and size. */
export function officeJsSnippet(blobName: string, place: { left: number; top: number; width: number; height: number }): string {
  return [
    `// base64 PNG stored in step 1 under ${JSON.stringify(blobName)}`,
    `const image = blobs[${JSON.stringify(blobName)}];`,
    "await new Promise((resolve, reject) =>",
    "  Office.context.document.setSelectedDataAsync(",
    "    image,",
    `    { coercionType: Office.CoercionType.Image, imageLeft: ${place.left}, imageTop: ${place.top}, imageWidth: ${place.width}, imageHeight: ${place.height} },`,
    "    (result) => (result.status === Office.AsyncResultStatus.Succeeded ? resolve(undefined) : reject(result.error)),",
    "  ),",
    ");",
  ].join("\n");
}

const FAILURE = "Failed to insert logo. Try again later";

export function registerInsertLogo(server: McpServer, ctx: ToolContext) {
  registerScopedTool(
    server,
    "insert_logo",
    {
      title: "Insert a logo into a slide",
      description:
        "Find a company's logo (the wordmark where there is one) and prepare it for insertion into the current presentation slide. " +
        "Returns a file_id, a blob_name and instructions: call store_blob with file_id and blob_name, then execute_office_js with the given code. " +
        "Sizes and positions are in points. Do not embed base64 image data yourself. Counts the company towards the daily unique-company quota.",
      inputSchema,
      outputSchema: z.object({
        file_id: z.string(),
        blob_name: z.string(),
        companyName: z.string(),
        nameSource: nameSourceSchema,
        instructions: z.string(),
        _meta: usageMetaSchema,
      }),
      // Each call uploads a new file to the AI provider.
      annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: true },
      failure: FAILURE,
    },
    async (args) => {
      const found = await bestMatch(ctx, args.query, "full");
      if (!found.ok) return toolError(found.error.message);
      const { company, logo } = found.value;
      // The company counts only once the file is uploaded (handOut): a refused call uploads
      // nothing, a failed upload costs no quota, and a file the quota refuses meanwhile goes.
      const blobName = logoFileName(company.domain, logo.id);
      const uploaded = await handOut(
        ctx,
        [company.companyId],
        async () => {
          const png = await readImage(ctx, logo, undefined, { maxBase64: MAX_UPLOAD_BASE64 });
          const upload = png.ok ? await uploadFile(ctx.env, { bytes: png.bytes, filename: blobName, mimeType: "image/png" }) : null;
          return upload?.ok ? ok(upload.value.fileId) : fail("unavailable", FAILURE);
        },
        (fileId) => deleteFile(ctx.env, fileId),
      );
      if (!uploaded.ok) return toolError(uploaded.error.message);
      const { made: fileId, usage } = uploaded.value;
      const place = {
        left: args.imageLeft,
        top: args.imageTop,
        width: args.imageWidth,
        height: args.imageHeight ?? round2((args.imageWidth * logo.height) / logo.width),
      };
      const instructions = [
        // The domain, not the company's name: a name may come from a site's own title
        // (discovery), and text there must not become a step the agent follows.
        `To insert the logo of ${company.domain} into the current slide:`,
        `1. Call the tool store_blob with file_id "${fileId}" and blob_name "${blobName}".`,
        `2. Call the tool execute_office_js with this code, which places the stored image ${place.width} × ${place.height} points at left ${place.left}, top ${place.top}:`,
        "",
        officeJsSnippet(blobName, place),
        "",
        "Do not embed base64 image data in the code; the image comes from the stored blob.",
      ].join("\n");
      return toolResult({
        file_id: fileId,
        blob_name: blobName,
        companyName: shownName(company),
        nameSource: company.nameSource,
        instructions,
        _meta: usageMeta(ctx, usage),
      });
    },
  );
}
