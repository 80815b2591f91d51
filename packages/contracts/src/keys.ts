import { z } from "zod";

/** When a key's spend limit starts again: UTC calendar periods (ISO weeks start on Monday). */
export const LimitResetSchema = z.enum(["daily", "weekly", "monthly", "never"]);
export type LimitReset = z.infer<typeof LimitResetSchema>;

export const ApiKeySchema = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string().describe("The first characters of the key, e.g. pm_a1b2c3"),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  spend_limit_cents: z
    .number()
    .int()
    .nullable()
    .describe("The most the key may spend from the wallet per period; null: no limit"),
  limit_reset: LimitResetSchema,
  expires_at: z.string().nullable().describe("From then on calls with the key answer 401 api_key_expired"),
  allowed_apps: z
    .array(z.string())
    .nullable()
    .describe("Slugs of the only apps the key may call; null: any app"),
  spent_micros: z
    .number()
    .int()
    .describe("What the key spent from the wallet in the current period (micro-dollars)"),
  period_resets_at: z
    .string()
    .nullable()
    .describe("When the current period ends and the spend starts again at 0; null for never"),
  made_by: z
    .object({ user_id: z.string(), name: z.string() })
    .nullable()
    .describe("An organization's key: the member who made it (it works while they may call); null otherwise"),
});
export type ApiKey = z.infer<typeof ApiKeySchema>;
export const ApiKeyListSchema = z.array(ApiKeySchema);

/** A key's options, as set at creation and changed by PATCH (decision 035). */
const keyOptions = {
  spend_limit_cents: z
    .number()
    .int("must be a whole number of cents")
    .min(1, "must be at least 1 cent")
    .max(100_000_000, "must be at most $1,000,000")
    .nullable(),
  limit_reset: LimitResetSchema,
  expires_at: z.iso.datetime({ offset: true, message: "must be an ISO 8601 date-time" }).nullable(),
  allowed_apps: z
    .array(z.string().trim().min(1, "must not contain empty slugs").max(100))
    .max(100, "must list at most 100 apps")
    .nullable(),
};

const name = z.string().trim().min(1, "is required").max(100, "must be at most 100 characters");

export const CreateApiKeySchema = z.strictObject({
  name,
  spend_limit_cents: keyOptions.spend_limit_cents.optional(),
  limit_reset: keyOptions.limit_reset.optional(),
  expires_at: keyOptions.expires_at.optional(),
  allowed_apps: keyOptions.allowed_apps.optional(),
});
export type CreateApiKey = z.infer<typeof CreateApiKeySchema>;

/** Only the fields given change; null clears an option. */
export const UpdateApiKeySchema = z.strictObject({
  name: name.optional(),
  spend_limit_cents: keyOptions.spend_limit_cents.optional(),
  limit_reset: keyOptions.limit_reset.optional(),
  expires_at: keyOptions.expires_at.optional(),
  allowed_apps: keyOptions.allowed_apps.optional(),
});
export type UpdateApiKey = z.infer<typeof UpdateApiKeySchema>;

/** Returned once, at creation: the only time the full key is visible. */
export const CreatedApiKeySchema = ApiKeySchema.extend({ key: z.string() });
export type CreatedApiKey = z.infer<typeof CreatedApiKeySchema>;
