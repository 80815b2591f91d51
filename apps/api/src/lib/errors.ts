import type { PaymentRemedy } from "@promptmint/contracts";

/** The handful of error codes the API answers with, and their HTTP status (DESIGN.md §4). */
export const errorStatus = {
  bad_request: 400,
  unauthorized: 401,
  /** The API key passed its expiry date (decision 035). */
  api_key_expired: 401,
  payment_required: 402,
  /** The caller owes money (a refunded or disputed payment already spent): top up first. */
  account_in_debt: 402,
  /** The API key's spend limit for its period would be passed by this call (decision 035). */
  key_limit_reached: 402,
  /** The member's monthly budget in the organization paying would be passed by this call (decision 084). */
  member_budget_reached: 402,
  forbidden: 403,
  /** The operator suspended this account: its API keys are refused. */
  account_suspended: 403,
  /** The signed-in person's email address is not verified yet (decision 041): operator rights, payouts. */
  email_unverified: 403,
  /** The member's role in the organization may not do this (decision 084): the message names the role. */
  organization_role: 403,
  /** An invitation is accepted only by the person signed in with the invited address (decision 084). */
  invitation_email_mismatch: 403,
  /** The API key's allow-list does not name this app (decision 035). */
  app_not_allowed_for_key: 403,
  not_found: 404,
  /** The caller pinned a prompt version or label the app does not have (docs/decisions/057). */
  version_not_found: 404,
  conflict: 409,
  /** `production` cannot move while an experiment splits its callers, unless the move ends it (decision 075). */
  experiment_running: 409,
  /** The invitation's link passed its expiry: the message says when; ask for a new one. */
  invitation_expired: 410,
  /** The call's price is above the caller's maximum (`max_price_cents`): nothing was charged. */
  price_above_maximum: 412,
  payload_too_large: 413,
  /** The call's input could cost its creator more at the model vendor than the call pays (decision 063). */
  input_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  /** The model provider is rate limiting: the caller may retry after `Retry-After` (nothing was charged). */
  upstream_rate_limited: 429,
  internal_error: 500,
  upstream_failed: 502,
  unavailable: 503,
  upstream_timeout: 504,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly fields: Record<string, string> | undefined;
  headers: Record<string, string> | undefined;
  /** A 402's machine-readable remedy (lib/payment-remedy.ts), in every protocol's error shape. */
  remedy: PaymentRemedy | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    extra: { fields?: Record<string, string>; headers?: Record<string, string>; remedy?: PaymentRemedy } = {},
  ) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.fields = extra.fields;
    this.headers = extra.headers;
    this.remedy = extra.remedy;
  }

  get status(): number {
    return errorStatus[this.code];
  }
}

export const notFound = (what: string) => new AppError("not_found", `${what} not found`);

/** 400 naming each bad field: `invalidFields({"user.email": "cannot be changed"})`. */
export function invalidFields(fields: Record<string, string>): AppError {
  const summary = Object.entries(fields)
    .map(([field, problem]) => `${field} ${problem}`)
    .join("; ");
  return new AppError("bad_request", `Invalid request: ${summary}`, { fields });
}
