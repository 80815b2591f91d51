import { PaymentRemedySchema } from "@promptmint/contracts";
import { z } from "zod";
import { AppError, type ErrorCode } from "../../lib/errors.ts";

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
