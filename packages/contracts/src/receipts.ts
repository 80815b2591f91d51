import { z } from "zod";
import { UuidSchema } from "./ids.ts";

/**
 * Receipts (issue 39 item 5, docs/decisions/069): one per wallet top-up, plan payment and paid
 * payout, numbered once (`PM-000123`); readable as HTML and PDF by their own user only.
 */
export const ReceiptKindSchema = z.enum(["top_up", "plan_payment", "payout"]);
export type ReceiptKind = z.infer<typeof ReceiptKindSchema>;

/** `paid`, or what happened to the payment since: refunded (wholly or in part) or disputed; a payout returned. */
export const ReceiptStatusSchema = z.enum(["paid", "partially_refunded", "refunded", "disputed", "reversed"]);
export type ReceiptStatus = z.infer<typeof ReceiptStatusSchema>;

export const ReceiptSchema = z.object({
  /** `PM-` and at least six digits; never changes. */
  number: z.string(),
  kind: ReceiptKindSchema,
  /** The fact it is for: the top-up's or plan payment's ledger transaction, or the payout. */
  source_id: z.string(),
  description: z.string(),
  amount_cents: z.number().int(),
  currency: z.string(),
  status: ReceiptStatusSchema,
  /** When the money moved (a payout: when it was paid). */
  occurred_at: z.string(),
});
export type Receipt = z.infer<typeof ReceiptSchema>;

export const ReceiptListSchema = z.object({
  /** Newest first. */
  receipts: z.array(ReceiptSchema),
});
export type ReceiptList = z.infer<typeof ReceiptListSchema>;

export const RECEIPT_NUMBER_PATTERN = /^PM-\d{6,18}$/;

export const ReceiptParamsSchema = z.object({
  number: z.string().regex(RECEIPT_NUMBER_PATTERN, "must be a receipt number like PM-000123"),
});

/** `GET /usage/export.csv`: a consumer's charged calls from `from` to `to` (UTC dates, both included). */
export const UsageExportQuerySchema = z.object({
  from: z.string({ error: "is required (YYYY-MM-DD)" }).max(40),
  to: z.string({ error: "is required (YYYY-MM-DD)" }).max(40),
  /** Only the calls made with this API key of yours (its id). */
  key: UuidSchema.optional(),
  /** Only the calls to this application (its slug). */
  app: z.string().min(1).max(100).optional(),
});
export type UsageExportQuery = z.infer<typeof UsageExportQuerySchema>;

/** The receipt number as shown: `PM-` and the number, at least six digits. */
export function formatReceiptNumber(number: number): string {
  return `PM-${String(number).padStart(6, "0")}`;
}
