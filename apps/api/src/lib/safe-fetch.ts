import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import net from "node:net";
import { Agent, type Dispatcher, fetch as undiciFetch } from "undici";
import { AppError } from "./errors.ts";

/**
 * Fetches creator-supplied URLs without letting them reach this machine's network: private,
 * loopback, link-local, metadata and other special addresses are refused, by literal IP (in any
 * notation the URL parser accepts), by DNS name, and on every redirect hop. The address is checked
 * inside the connection's own lookup, so a name cannot resolve to a public address for the check
 * and to a private one for the connection (DNS rebinding). Response size and time are capped.
 */

const BLOCKED_V4: [string, number][] = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
];
const BLOCKED_V6: [string, number][] = [
  // Unspecified, loopback and the deprecated IPv4-compatible ::a.b.c.d (written ::7f00:1 once parsed).
  ["::", 96],
  ["::1", 128],
  ["64:ff9b::", 96],
  ["64:ff9b:1::", 48],
  ["100::", 64],
  ["2001::", 32],
  ["2001:db8::", 32],
  ["2002::", 16],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
];
const blockList = new net.BlockList();
for (const [address, prefix] of BLOCKED_V4) blockList.addSubnet(address, prefix, "ipv4");
for (const [address, prefix] of BLOCKED_V6) blockList.addSubnet(address, prefix, "ipv6");

/** An IPv4 address carried inside an IPv6 one (::ffff:a.b.c.d, ::a.b.c.d), if any. */
function embeddedIpv4(address: string): string | undefined {
  const dotted = /^(?:::ffff:|::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (dotted) return dotted[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (hex?.[1] && hex[2]) {
    const high = Number.parseInt(hex[1], 16);
    const low = Number.parseInt(hex[2], 16);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return undefined;
}

export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return blockList.check(address, "ipv4");
  if (family === 6) {
    const v4 = embeddedIpv4(address.toLowerCase());
    if (v4) return blockList.check(v4, "ipv4");
    if (/^::ffff:/i.test(address)) return true;
    return blockList.check(address, "ipv6");
  }
  return true;
}

export interface SafeFetchOptions {
  /** Let private addresses through (ALLOW_PRIVATE_UPSTREAMS=true: tests and local development). */
  allowPrivate: boolean;
  timeoutMs: number;
  maxResponseBytes?: number;
  maxRedirects?: number;
  /** Injected for tests: the DNS resolver, and the rule that decides which addresses are refused. */
  lookup?: typeof dnsLookup;
  isBlocked?: (address: string) => boolean;
}

export interface SafeFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  /** Overrides the default deadline for this request (the whole exchange, body included). */
  timeoutMs?: number;
}

export type SafeFetch = (url: string, init?: SafeFetchInit) => Promise<SafeResponse>;

export interface SafeResponse {
  status: number;
  headers: Headers;
  url: string;
  /** The body, read up to the size cap. */
  text(): Promise<string>;
  /** The body as a stream of text chunks (for SSE), under the same size cap. */
  chunks(): AsyncIterable<string>;
}

const blockedError = (host: string) =>
  new AppError(
    "bad_request",
    `The URL's host '${host}' resolves to a private or reserved address, which providers may not use`,
  );

export function createSafeFetch(options: SafeFetchOptions): SafeFetch {
  const isBlocked = options.isBlocked ?? isPrivateAddress;
  const resolve = options.lookup ?? dnsLookup;
  const maxBytes = options.maxResponseBytes ?? 5 * 1024 * 1024;

  const guardedLookup = ((
    hostname: string,
    lookupOptions: object,
    callback: (...args: unknown[]) => void,
  ) => {
    resolve(
      hostname,
      { ...lookupOptions, all: true },
      (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => {
        if (error) return callback(error);
        const list = Array.isArray(addresses) ? addresses : [addresses as unknown as LookupAddress];
        if (!options.allowPrivate && list.some((entry) => isBlocked(entry.address))) {
          return callback(
            Object.assign(new Error(`blocked private address for ${hostname}`), { code: "EPRIVATE" }),
          );
        }
        if ((lookupOptions as { all?: boolean }).all) return callback(null, list);
        const first = list[0];
        return callback(null, first?.address, first?.family);
      },
    );
  }) as unknown as typeof dnsLookup;

  // One pool for every provider call; each request brings its own deadline.
  const dispatcher: Dispatcher = new Agent({
    connect: { lookup: guardedLookup },
    headersTimeout: 0,
    bodyTimeout: 0,
  });

  function checkUrl(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new AppError("bad_request", `'${raw.slice(0, 200)}' is not a valid URL`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new AppError("bad_request", `Only http and https URLs are allowed, not '${url.protocol}'`);
    }
    if (url.username || url.password)
      throw new AppError("bad_request", "URLs with embedded credentials are not allowed");
    // A trailing dot ("localhost.") names the same host as without it.
    const host = url.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "");
    if (!options.allowPrivate && net.isIP(host) && isBlocked(host)) throw blockedError(url.hostname);
    if (!options.allowPrivate && /^(localhost|.*\.localhost|.*\.local|.*\.internal)$/i.test(host))
      throw blockedError(url.hostname);
    return url;
  }

  return async function safeFetch(raw: string, init: SafeFetchInit = {}): Promise<SafeResponse> {
    const deadline = AbortSignal.timeout(init.timeoutMs ?? options.timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    let url = checkUrl(raw);
    let method = init.method ?? "GET";
    let body = init.body;
    for (let hop = 0; ; hop++) {
      let response: Awaited<ReturnType<typeof undiciFetch>>;
      try {
        response = await undiciFetch(url, {
          method,
          headers: init.headers,
          body,
          redirect: "manual",
          signal,
          dispatcher,
        });
      } catch (error) {
        throw describeFetchError(error, url);
      }
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel().catch(() => {});
        if (hop >= (options.maxRedirects ?? 3))
          throw new AppError("upstream_failed", "The provider redirected too many times");
        url = checkUrl(new URL(location, url).toString());
        if (
          response.status === 303 ||
          ((response.status === 301 || response.status === 302) && method === "POST")
        ) {
          method = "GET";
          body = undefined;
        }
        continue;
      }
      return wrapResponse(response, url, maxBytes, signal);
    }
  };
}

function wrapResponse(
  response: Awaited<ReturnType<typeof undiciFetch>>,
  url: URL,
  maxBytes: number,
  signal: AbortSignal,
): SafeResponse {
  async function* chunks() {
    if (!response.body) return;
    const decoder = new TextDecoder();
    let received = 0;
    try {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        received += chunk.byteLength;
        if (received > maxBytes) {
          await response.body.cancel().catch(() => {});
          throw new AppError(
            "upstream_failed",
            `The provider's response exceeded ${Math.round(maxBytes / 1024 / 1024)} MiB`,
          );
        }
        yield decoder.decode(chunk, { stream: true });
      }
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw describeFetchError(signal.aborted ? (signal.reason ?? error) : error, url);
    }
  }
  return {
    status: response.status,
    headers: response.headers as unknown as Headers,
    url: url.toString(),
    chunks,
    async text() {
      let text = "";
      for await (const chunk of chunks()) text += chunk;
      return text;
    },
  };
}

function describeFetchError(error: unknown, url: URL): AppError {
  if (error instanceof AppError) return error;
  const err = error as {
    name?: string;
    code?: string;
    cause?: { code?: string; name?: string; message?: string };
  };
  const code = err.cause?.code ?? err.code;
  if (
    err.name === "TimeoutError" ||
    err.cause?.name === "TimeoutError" ||
    code === "UND_ERR_HEADERS_TIMEOUT" ||
    code === "UND_ERR_BODY_TIMEOUT"
  ) {
    return new AppError("upstream_timeout", `The provider at ${url.host} did not answer in time`);
  }
  if (code === "EPRIVATE" || err.cause?.message?.includes("blocked private address"))
    return blockedError(url.hostname);
  if (code === "ENOTFOUND")
    return new AppError("upstream_failed", `The provider's host '${url.hostname}' could not be found`);
  if (code === "ECONNREFUSED")
    return new AppError("upstream_failed", `The provider at ${url.host} refused the connection`);
  return new AppError("upstream_failed", `Could not reach the provider at ${url.host}`);
}
