import type { FastifyError, FastifyInstance } from "fastify";
import { toAppError } from "../../lib/error-handler.ts";
import { AppError, type ErrorCode, invalidFields } from "../../lib/errors.ts";
import { remedyFields } from "../../lib/payment-remedy.ts";
import type { GatewayInput } from "./execution.ts";

/**
 * An error Dify's service API names with a code of its own (`not_chat_app`, `file_too_large`…):
 * the status is ours (lib/errors.ts), the code in the answer is Dify's.
 */
export class DifyError extends AppError {
  readonly difyCode: string;

  constructor(
    code: ErrorCode,
    difyCode: string,
    message: string,
    extra: { fields?: Record<string, string> } = {},
  ) {
    super(code, message, extra);
    this.difyCode = difyCode;
  }
}

/**
 * Our codes as Dify's service API names them (its controllers' errors and werkzeug's): a Dify
 * client branching on `code` sees the names it knows. Codes Dify has no equivalent for
 * (payment_required, price_above_maximum…) stay ours.
 */
const DIFY_CODES: Partial<Record<ErrorCode, string>> = {
  bad_request: "invalid_param",
  upstream_failed: "completion_request_error",
  upstream_timeout: "completion_request_error",
  // Dify's InvokeRateLimitError: the model provider's rate limit, 429.
  upstream_rate_limited: "rate_limit_error",
};

/** The code a Dify client is answered with for an error (in a JSON body or a stream's `error` event). */
export function difyCodeOf(error: AppError): string {
  return error instanceof DifyError ? error.difyCode : (DIFY_CODES[error.code] ?? error.code);
}

/** Dify's `error` event, which ends a stream that failed, with the stream's ids. */
export function errorEvent(error: AppError, ids: object) {
  return { event: "error", ...ids, status: error.status, code: difyCodeOf(error), message: error.message };
}

export const notWorkflowApp = () =>
  new DifyError(
    "bad_request",
    "not_workflow_app",
    "This is not a workflow app: call completion-messages or chat-messages instead",
  );

export const notChatApp = () =>
  new DifyError("bad_request", "not_chat_app", "This is not a chat app: call completion-messages instead");

export const conversationNotExists = () =>
  new DifyError("not_found", "not_found", "Conversation Not Exists.");

export const messageNotExists = () => new DifyError("not_found", "not_found", "Message Not Exists.");

/**
 * Answers the Dify routes' errors in Dify's shape, `{code, message, status}` with Dify's codes
 * (plus `fields` naming what was wrong): only within the plugin it is installed in, so the rest
 * of the API keeps its own codes.
 */
export function installDifyErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    const appError = toAppError(error, request);
    if (appError.headers) reply.headers(appError.headers);
    return reply.status(appError.status).send({
      code: difyCodeOf(appError),
      message: appError.message,
      status: appError.status,
      ...(appError.fields ? { fields: appError.fields } : {}),
      ...remedyFields(appError),
    });
  });
}

/**
 * Dify's request fields that would change the answer and that Promptmint cannot honour are
 * refused by name (a null or empty value asks for nothing); its metadata (`retriever_from`,
 * `trace_id`) is accepted.
 */
export function refuseUnsupportedFields(
  input: Pick<GatewayInput, "workflow_id" | "parent_message_id" | "files">,
): void {
  const refused: Record<string, string> = {};
  if (input.workflow_id)
    refused.workflow_id = "is not supported: an app answers with its one published version";
  if (input.parent_message_id)
    refused.parent_message_id = "is not supported: a conversation's messages form one thread";
  if (input.files?.length)
    refused.files = "are not supported by this app's model (file_upload is disabled in /parameters)";
  if (Object.keys(refused).length > 0) throw invalidFields(refused);
}
