import type { ApiError } from "@promptmint/contracts";
import { readActingOrganization } from "./acting-account";

/** Every product API path is relative to this base (SPEC §7). */
export const API_BASE = "/api";

/** SPEC §9: the access token is kept in local storage under this key. */
export const ACCESS_TOKEN_STORAGE_KEY = "token";

/** SPEC §8: the last resort when neither the server nor the client gave a message. */
export const FALLBACK_ERROR_MESSAGE = "An unexpected error occurred";

type MaybeToken = string | null | undefined;
export type AccessTokenProvider = () => MaybeToken | Promise<MaybeToken>;

const readStoredToken: AccessTokenProvider = () => window.localStorage.getItem(ACCESS_TOKEN_STORAGE_KEY);
let accessTokenProvider: AccessTokenProvider = readStoredToken;

/**
 * The auth provider registers where the current access token comes from (the OIDC user
 * store), so a request never goes out with a token older than the last silent renew.
 * Without a provider the token kept in local storage is used.
 */
export function setAccessTokenProvider(provider: AccessTokenProvider | null): void {
  accessTokenProvider = provider ?? readStoredToken;
}

/** Given the token the API refused (401), a new one to try the request with once, if there is one. */
export type UnauthorizedHandler = (rejectedToken: string) => Promise<string | undefined>;
let unauthorizedHandler: UnauthorizedHandler | undefined;

/**
 * The auth provider registers how a refused token is replaced (a renewal with the refresh token):
 * a request answered 401 is sent again once with the new token before it fails.
 */
export function setUnauthorizedHandler(handler: UnauthorizedHandler | null): void {
  unauthorizedHandler = handler ?? undefined;
}

/**
 * The header naming the organization the signed-in member acts for (contracts' ORGANIZATION_HEADER,
 * spelt here so the first load does not carry the contracts' schemas).
 */
export const ORGANIZATION_HEADER_NAME = "Promptmint-Organization";

/**
 * Paths that are the signed-in person's whatever account they act for: their session and profile,
 * their organizations and invitations, the operator's pages.
 */
const PERSON_PATHS = /^\/(auth|admin)\/|^\/(organizations|invitations)(\/|\?|$)/;

/** The acting-account header a request to `path` (below /api) carries: none for the person's own. */
export function organizationHeaderFor(path: string): Record<string, string> {
  const organization = readActingOrganization();
  if (!organization || PERSON_PATHS.test(path)) return {};
  return { [ORGANIZATION_HEADER_NAME]: organization.id };
}

/** The API's 404: the thing asked for does not exist, or is not the caller's to see. */
export function isNotFoundError(error: unknown): boolean {
  return error instanceof ApiClientError && error.status === 404;
}

/** A non-2xx answer from the API, carrying the server's error shape when it sent one. */
export class ApiClientError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  readonly fields: Record<string, string> | undefined;
  readonly body: unknown;

  constructor(status: number, body: unknown) {
    super(messageFromBody(body) ?? `Request failed with status code ${status}`);
    this.name = "ApiClientError";
    this.status = status;
    this.body = body;
    const error = isRecord(body) ? (body as Partial<ApiError>) : {};
    this.code = typeof error.code === "string" ? error.code : undefined;
    this.fields = isStringRecord(error.fields) ? error.fields : undefined;
  }
}

/** SPEC §8: a failed call's message comes from the body's detail, then message, then error. */
export function messageFromBody(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined;
  for (const key of ["detail", "message", "error"]) {
    const value = body[key];
    if (typeof value === "string" && value.trim() !== "") return value;
  }
  return undefined;
}

/** The user-visible text for any error: server message, client message, then the fallback. */
export function getErrorMessage(error: unknown): string {
  if (error instanceof Error && error.message.trim() !== "") return error.message;
  return FALLBACK_ERROR_MESSAGE;
}

export interface Parser<T> {
  parse(data: unknown): T;
}

export interface RequestOptions<T> {
  method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  body?: unknown;
  /** Validates and types the answer; without it the JSON is returned as is. */
  schema?: Parser<T>;
  /** Overrides the current user's token; `null` sends the request without one. */
  token?: string | null;
  signal?: AbortSignal;
  /** Extra request headers (e.g. `Idempotency-Key`). */
  headers?: Record<string, string>;
}

/**
 * Sends a request with the current user's token (or the caller's override); when the API refuses
 * the current user's token (401), once more with the token the unauthorized handler gives.
 */
async function fetchWithToken(
  path: string,
  init: RequestInit & { headers: Headers },
  tokenOverride: string | null | undefined,
): Promise<Response> {
  const url = `${API_BASE}${path}`;
  const token = tokenOverride !== undefined ? tokenOverride : await accessTokenProvider();
  if (token) {
    init.headers.set("Authorization", `Bearer ${token}`);
    // Only a signed-in member acts for an organization: an anonymous request names none.
    for (const [name, value] of Object.entries(organizationHeaderFor(path))) init.headers.set(name, value);
  }
  const response = await fetch(url, init);
  if (response.status !== 401 || tokenOverride !== undefined || !token || !unauthorizedHandler)
    return response;
  const renewed = await unauthorizedHandler(token).catch(() => undefined);
  if (!renewed || renewed === token) return response;
  init.headers.set("Authorization", `Bearer ${renewed}`);
  return fetch(url, init);
}

export async function apiRequest<T = unknown>(path: string, options: RequestOptions<T> = {}): Promise<T> {
  const method = options.method ?? "GET";
  const headers = new Headers({ Accept: "application/json" });
  for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value);

  let body: string | undefined;
  if (options.body !== undefined) {
    headers.set("Content-Type", "application/json");
    body = JSON.stringify(options.body);
  }

  const response = await fetchWithToken(
    path,
    { method, headers, body, signal: options.signal },
    options.token,
  );
  const payload = await readPayload(response);

  if (!response.ok) {
    if (response.status === 401) {
      console.warn(`[api] ${method} ${path} answered 401 Unauthorized`);
    }
    throw new ApiClientError(response.status, payload);
  }
  return options.schema ? options.schema.parse(payload) : (payload as T);
}

/** A binary answer (e.g. a zip) from a GET, with the file name the server gave it; failures throw like `apiRequest`. */
export async function apiDownload(
  path: string,
  options: Pick<RequestOptions<never>, "token" | "signal"> = {},
): Promise<{ blob: Blob; fileName: string | undefined }> {
  const headers = new Headers({ Accept: "application/zip, application/octet-stream, application/json" });
  const response = await fetchWithToken(
    path,
    { method: "GET", headers, signal: options.signal },
    options.token,
  );
  if (!response.ok) throw new ApiClientError(response.status, await readPayload(response));
  return { blob: await response.blob(), fileName: fileNameOf(response.headers.get("Content-Disposition")) };
}

/** The `filename` of a Content-Disposition header (RFC 6266), without any path. */
export function fileNameOf(contentDisposition: string | null): string | undefined {
  if (!contentDisposition) return undefined;
  const encoded = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(contentDisposition)?.[1];
  let name = encoded
    ? safeDecode(encoded)
    : /filename\s*=\s*(?:"([^"]*)"|([^;]+))/i.exec(contentDisposition)?.slice(1).find(Boolean);
  name = name?.trim().split(/[\\/]/).pop();
  return name || undefined;
}

function safeDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

async function readPayload(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return isRecord(value) && Object.values(value).every((entry) => typeof entry === "string");
}
