import { z } from "zod";

export const ApiKeySchema = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string().describe("The first characters of the key, e.g. pm_a1b2c3"),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
});
export type ApiKey = z.infer<typeof ApiKeySchema>;
export const ApiKeyListSchema = z.array(ApiKeySchema);

export const CreateApiKeySchema = z.strictObject({
  name: z.string().trim().min(1, "is required").max(100, "must be at most 100 characters"),
});

/** Returned once, at creation: the only time the full key is visible. */
export const CreatedApiKeySchema = ApiKeySchema.extend({ key: z.string() });
export type CreatedApiKey = z.infer<typeof CreatedApiKeySchema>;
