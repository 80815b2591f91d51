import { z } from "zod";
import { MaxPriceCentsSchema } from "./gateway.ts";

export const MAX_EMBED_ORIGINS = 20;

/** `https://example.com` or `http://localhost:8080`: scheme, host and port only (no wildcards), as browsers send `Origin`. */
export function isExactOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (
      (url.protocol === "https:" || url.protocol === "http:") &&
      url.origin === value &&
      /^([a-z0-9-]+\.)*[a-z0-9-]+$|^\[[0-9a-f:.]+\]$/.test(url.hostname)
    );
  } catch {
    return false;
  }
}

const EmbedOriginSchema = z
  .string()
  .trim()
  .max(200, "must be at most 200 characters")
  .transform((value) => value.replace(/\/$/, "").toLowerCase())
  .refine(isExactOrigin, "must be an origin like https://example.com (scheme, host and port; no path)");

/**
 * What embedded traffic may cost the owner until they say otherwise (docs/decisions/022): $5 a
 * UTC day, and per visitor (widget load, and separately client address) 20 calls an hour and
 * 100 a day.
 */
export const EMBED_LIMIT_DEFAULTS = {
  daily_cap_cents: 500,
  visitor_calls_per_hour: 20,
  visitor_calls_per_day: 100,
} as const;
export const MAX_EMBED_DAILY_CAP_CENTS = 1_000_000;
const MAX_VISITOR_CALLS = 10_000;

const visitorCalls = z
  .number({ error: "must be a whole number" })
  .int("must be a whole number")
  .min(1, "must be at least 1")
  .max(MAX_VISITOR_CALLS, `must be at most ${MAX_VISITOR_CALLS}`);

/** Replaces the settings it names; the others stay as they are. */
export const UpdateEmbedSettingsSchema = z.strictObject({
  allowed_origins: z
    .array(EmbedOriginSchema)
    .max(MAX_EMBED_ORIGINS, `may list at most ${MAX_EMBED_ORIGINS} origins`)
    .transform((origins) => [...new Set(origins)])
    .optional(),
  /** 0 turns embedded calls off. */
  daily_cap_cents: z
    .number({ error: "must be a whole number of cents" })
    .int("must be a whole number of cents")
    .min(0, "must be at least 0")
    .max(MAX_EMBED_DAILY_CAP_CENTS, `must be at most ${MAX_EMBED_DAILY_CAP_CENTS} cents`)
    .optional(),
  visitor_calls_per_hour: visitorCalls.optional(),
  visitor_calls_per_day: visitorCalls.optional(),
});
export type UpdateEmbedSettings = z.input<typeof UpdateEmbedSettingsSchema>;

/** An app's embed settings as its owner sees them. */
export const EmbedSettingsSchema = z.object({
  allowed_origins: z.array(z.string()),
  /** The `<script>` tag to paste into a page on one of the allowed origins. */
  snippet: z.string(),
  /** What each call from the widget costs the owner's wallet. */
  price_cents: z.number().int(),
  /** An announced increase of that price, from `pending_price_at` on (null when none). */
  pending_price_cents: z.number().int().nullable(),
  pending_price_at: z.string().nullable(),
  /** Embedded calls stop for the rest of the UTC day once they would spend more than this. */
  daily_cap_cents: z.number().int(),
  /** Spent today (UTC) on embedded calls, calls in flight included. */
  spent_today_cents: z.number().int(),
  /** Per visitor: each widget load, and each client address, may make this many calls. */
  visitor_calls_per_hour: z.number().int(),
  visitor_calls_per_day: z.number().int(),
});
export type EmbedSettings = z.infer<typeof EmbedSettingsSchema>;

/** A visitor's message from the widget (chat) or the text to complete (completion). */
export const EmbedMessageRequestSchema = z.strictObject({
  query: z.string().trim().min(1, "is required").max(4000, "must be at most 4000 characters"),
  inputs: z.record(z.string(), z.unknown()).default({}),
  conversation_id: z.string().max(100).nullish(),
  max_price_cents: MaxPriceCentsSchema.optional(),
});
export type EmbedMessageRequest = z.input<typeof EmbedMessageRequestSchema>;

export const EmbedMessageResponseSchema = z.object({
  message_id: z.string(),
  answer: z.string(),
  conversation_id: z.string().optional(),
});
export type EmbedMessageResponse = z.infer<typeof EmbedMessageResponseSchema>;
