import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from "fastify-type-provider-zod";
import { formatBytes } from "./body-limits.ts";
import { concurrentConflict, databaseUnavailable } from "./database-errors.ts";
import { AppError, type ErrorCode, errorStatus, invalidFields } from "./errors.ts";
import { remedyFields } from "./payment-remedy.ts";

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  message: string;
  params: { keys?: string[] };
}

/** Turns zod issues into `{ "user.email": "must be a string" }`, with unknown keys named one by one. */
export function fieldsFromValidation(
  issues: ValidationIssue[],
  context: string | undefined,
): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const issue of issues) {
    const base = issue.instancePath.split("/").filter(Boolean).join(".");
    if (issue.keyword === "unrecognized_keys" && issue.params.keys) {
      for (const key of issue.params.keys) fields[base ? `${base}.${key}` : key] = "is not an allowed field";
      continue;
    }
    const name = base || (context === "body" ? "body" : (context ?? "request"));
    fields[name] ??= issue.message.replace(/^Invalid input: /, "");
  }
  return fields;
}

// The first code listed for a status is its general one (payment_required, not account_in_debt).
const statusToCode = Object.fromEntries(
  Object.entries(errorStatus)
    .reverse()
    .map(([code, status]) => [status, code]),
) as Record<number, ErrorCode>;

/** Any error a route threw, as the AppError the API answers with (logged when it is ours to fix). */
export function toAppError(error: FastifyError | AppError, request: FastifyRequest): AppError {
  let appError: AppError;
  if (error instanceof AppError) {
    appError = error;
  } else if (hasZodFastifySchemaValidationErrors(error)) {
    appError = invalidFields(
      fieldsFromValidation(error.validation as ValidationIssue[], error.validationContext),
    );
  } else if (isResponseSerializationError(error)) {
    request.log.error({ err: error, issues: error.cause.issues }, "response did not match its schema");
    appError = new AppError("internal_error", "Internal server error");
  } else if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    appError = new AppError(
      statusToCode[error.statusCode] ?? "bad_request",
      describeClientError(error, request),
    );
  } else if (databaseUnavailable(error)) {
    request.log.warn({ err: error }, "database unavailable");
    appError = databaseUnavailable(error) as AppError;
  } else if (concurrentConflict(error)) {
    request.log.warn({ err: error }, "concurrent write conflict");
    appError = concurrentConflict(error) as AppError;
  } else {
    request.log.error({ err: error }, "unhandled error");
    appError = new AppError("internal_error", "Internal server error");
  }
  if (appError.status >= 500 && error instanceof AppError)
    request.log.warn({ code: appError.code }, appError.message);
  return appError;
}

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    const appError = toAppError(error, request);
    if (appError.headers) reply.headers(appError.headers);
    return reply.status(appError.status).send({
      code: appError.code,
      message: appError.message,
      status: appError.status,
      ...(appError.fields ? { fields: appError.fields } : {}),
      ...remedyFields(appError),
    });
  });

  app.setNotFoundHandler(sendRouteNotFound);
}

/** The API's 404 for a route that does not exist (also for Dify-style paths under /api/v1). */
export function sendRouteNotFound(request: FastifyRequest, reply: FastifyReply) {
  return reply.status(404).send({
    code: "not_found",
    message: `Route ${request.method} ${request.url.split("?")[0]} not found`,
    status: 404,
  });
}

/** Fastify's own 4xx errors in words a caller can act on (shared with the OpenAI-shaped handler). */
export function describeClientError(error: FastifyError, request: FastifyRequest): string {
  switch (error.code) {
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return error.code === "FST_ERR_CTP_EMPTY_JSON_BODY"
        ? "Request body is empty but Content-Type is application/json"
        : "Request body is not valid JSON";
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return `Request body is too large: this route accepts at most ${formatBytes(request.routeOptions.bodyLimit)}`;
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return "Unsupported Content-Type; send application/json";
    default:
      return error.message;
  }
}
