import { z } from "zod";
import { AppTypeSchema } from "./applications.ts";
import { AllowedValueSchema, SchemaFieldTypeSchema } from "./prompts.ts";

/** The two front-end apps a creator can download (SPEC §7 download-frontend). */
export const AppPackageTypeSchema = z.enum(["completion", "chat"]);
export type AppPackageType = z.infer<typeof AppPackageTypeSchema>;

export const DownloadFrontendQuerySchema = z.object({
  type: AppPackageTypeSchema.optional().describe(
    "Default: chat for prompt apps in chat mode, otherwise completion",
  ),
});

/** One input of the downloaded page's form, from the app's input schema. */
export const AppPackageFieldSchema = z.object({
  variable: z.string(),
  label: z.string(),
  type: SchemaFieldTypeSchema,
  required: z.boolean(),
  default: z.unknown().optional(),
  options: z.array(AllowedValueSchema).optional(),
  max_length: z.number().int().optional(),
});
export type AppPackageField = z.infer<typeof AppPackageFieldSchema>;

/** `app.json` inside the zip: what the downloaded page shows and sends. */
export const AppPackageManifestSchema = z.object({
  name: z.string(),
  description: z.string(),
  slug: z.string(),
  type: AppPackageTypeSchema,
  app_type: AppTypeSchema,
  inputs: z.array(AppPackageFieldSchema),
});
export type AppPackageManifest = z.infer<typeof AppPackageManifestSchema>;
