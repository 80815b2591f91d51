import { PaymentRemedySchema } from "@promptmint/contracts";
import { z } from "zod";
import { AppError, type ErrorCode } from "../../lib/errors.ts";
import { remedyFields } from "../../lib/payment-remedy.ts";

/**
 * An error OpenAI's API names with a code of its own (`previous_response_not_found`): the status is
 * ours (lib/errors.ts), the `code` and `param` in the answer are OpenAI's, as DifyError does for Dify.
 */
export class OpenAiError extends AppError {
  readonly openAiCode: string;
  readonly param: string | null;

  constructor(code: ErrorCode, openAiCode: string, message: string, param: string | null = null) {
    super(code, message);
    this.openAiCode = openAiCode;
    this.param = param;
  }
}

/** OpenAI's error shape, `{error: {message, type, param, code}}`, for the routes' response schemas. */
export const OpenAiErrorSchema = z.object({
  error: z.object({
    message: z.string(),
    type: z.string(),
    param: z.string().nullable(),
    code: z.string().nullable(),
    /** On a 402: what would let the call through (docs/decisions/052). */
    remedy: PaymentRemedySchema.optional(),
  }),
});

/** The OpenAI error `type` for a status (a model provider's rate limit: OpenAI's own `requests`). */
export function openAiErrorType(status: number, code?: string): string {
  if (code === "upstream_rate_limited") return "requests";
  if (status === 401) return "authentication_error";
  if (status === 402) return "insufficient_quota";
  if (status === 429) return "rate_limit_exceeded";
  if (status >= 500) return "api_error";
  return "invalid_request_error";
}

/** An AppError's `code` as OpenAI names it where it has a name of its own, else ours. */
export function openAiCodeOfAppError(error: AppError): string {
  if (error instanceof OpenAiError) return error.openAiCode;
  return error.code === "upstream_rate_limited" ? "rate_limit_exceeded" : error.code;
}

/**
 * The `error` object of OpenAI's shape for an AppError, the same whether it is a blocking answer's
 * body or the event that ends a stream: an SDK reading `type`/`code` (a model provider's 429 is
 * `requests`/`rate_limit_exceeded`) or a 402's remedy sees one answer either way.
 */
export function openAiErrorOf(error: AppError) {
  return {
    message: error.message,
    type: openAiErrorType(error.status, error.code),
    param: error instanceof OpenAiError ? error.param : (Object.keys(error.fields ?? {})[0] ?? null),
    code: openAiCodeOfAppError(error),
    ...remedyFields(error),
  };
}
