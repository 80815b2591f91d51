// The app's own little server: serves ./public and forwards /api/... to Promptmint with the API key,
// so the key never reaches the browser. Node.js built-ins only: run it with `node server.mjs`.
import { existsSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const publicDir = path.join(here, "public");
const MAX_BODY_BYTES = 1024 * 1024;

/** The Promptmint endpoints the page may reach, relative to /api/app/{slug}/. */
const FORWARDED = new Set([
  "completion-messages",
  "chat-messages",
  "parameters",
  "info",
  "messages",
  "conversations",
]);

const CONTENT_TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".ico": "image/x-icon",
};

/** KEY=value lines of .env; values already in the environment win. */
function loadEnvFile(file) {
  if (!existsSync(file)) return;
  for (const line of readFileSync(file, "utf8").split(/\r?\n/)) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!match || line.trimStart().startsWith("#")) continue;
    const [, name, raw] = match;
    const value = raw.replace(/^(["'])(.*)\1$/, "$2");
    if (process.env[name] === undefined) process.env[name] = value;
  }
}

loadEnvFile(path.join(here, ".env"));
const baseUrl = (process.env.PROMPTMINT_BASE_URL ?? "").replace(/\/+$/, "");
const slug = process.env.PROMPTMINT_APP_SLUG ?? "";
const apiKey = process.env.PROMPTMINT_API_KEY ?? "";
const port = Number(process.env.PORT ?? 8080);
// Only this machine by default: the server spends the key's owner's money for whoever reaches it.
const host = process.env.HOST || "127.0.0.1";
const ratePerMinute = Math.max(1, Number(process.env.RATE_LIMIT_PER_MINUTE) || 30);
const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "::1"]);

function sendJson(res, status, body) {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
  res.end(JSON.stringify(body));
}

async function readBody(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error("too large");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function forward(req, res, endpoint, search) {
  if (!baseUrl || !slug || !apiKey) {
    const missing = ["PROMPTMINT_BASE_URL", "PROMPTMINT_APP_SLUG", "PROMPTMINT_API_KEY"].filter(
      (name) => !process.env[name],
    );
    return sendJson(res, 503, {
      code: "not_configured",
      message: `Set ${missing.join(", ")} in .env and restart the server.`,
      status: 503,
    });
  }
  let body;
  if (req.method === "POST") {
    try {
      body = await readBody(req);
    } catch {
      return sendJson(res, 413, { code: "payload_too_large", message: "Request too large", status: 413 });
    }
  }
  let upstream;
  try {
    upstream = await fetch(`${baseUrl}/api/app/${encodeURIComponent(slug)}/${endpoint}${search}`, {
      method: req.method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        accept: req.headers.accept ?? "application/json",
        ...(body ? { "content-type": "application/json" } : {}),
      },
      body,
    });
  } catch (error) {
    return sendJson(res, 502, {
      code: "upstream_failed",
      message: `Promptmint could not be reached at ${baseUrl}: ${error.cause?.code ?? error.message}`,
      status: 502,
    });
  }
  const headers = { "content-type": upstream.headers.get("content-type") ?? "application/json" };
  const retryAfter = upstream.headers.get("retry-after");
  if (retryAfter) headers["retry-after"] = retryAfter;
  res.writeHead(upstream.status, headers);
  if (!upstream.body) return res.end();
  // Piped as it arrives, so streaming answers (server-sent events) reach the page live.
  Readable.fromWeb(upstream.body)
    .on("error", () => res.destroy())
    .pipe(res);
}

async function serveStatic(req, res, pathname) {
  let relative;
  try {
    relative = pathname === "/" ? "index.html" : decodeURIComponent(pathname).replace(/^\/+/, "");
  } catch {
    return sendJson(res, 404, { message: "Not found" });
  }
  // Only files under ./public (and app.json): never .env or the server itself.
  const file = relative === "app.json" ? path.join(here, "app.json") : path.resolve(publicDir, relative);
  if (file !== path.join(here, "app.json") && !file.startsWith(publicDir + path.sep))
    return sendJson(res, 404, { message: "Not found" });
  try {
    const content = await readFile(file);
    res.writeHead(200, { "content-type": CONTENT_TYPES[path.extname(file)] ?? "application/octet-stream" });
    res.end(req.method === "HEAD" ? undefined : content);
  } catch {
    sendJson(res, 404, { message: "Not found" });
  }
}

/**
 * Why a call to /api/... may not be forwarded with the key, or undefined when it may. Browsers
 * say where a request comes from (Sec-Fetch-Site, Origin); only this server's own page may
 * spend the key, and a `no-cors` form or `text/plain` post from another site never reaches
 * Promptmint. On loopback the Host must be a loopback name too, so a site whose DNS name points
 * at 127.0.0.1 (DNS rebinding) is not "same origin" either.
 */
function refusal(req) {
  const hostHeader = req.headers.host ?? "";
  if (LOOPBACK_HOSTS.has(host) && !LOOPBACK_NAMES.has(hostHeader.replace(/:\d+$/, "")))
    return [
      403,
      "forbidden",
      `This server only answers as localhost, not as ${hostHeader || "an unnamed host"}`,
    ];
  const site = req.headers["sec-fetch-site"];
  const origin = req.headers.origin;
  const ownOrigins = [`http://${hostHeader}`, `https://${hostHeader}`];
  if ((site && site !== "same-origin" && site !== "none") || (origin && !ownOrigins.includes(origin)))
    return [403, "forbidden", "Cross-site requests are not forwarded: call this app from its own page"];
  if (req.method === "POST") {
    const type = (req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
    if (type !== "application/json")
      return [415, "unsupported_media_type", "Send the request body as application/json"];
  }
  return undefined;
}

/** Calls forwarded per client address and minute; a busy or hostile visitor gets 429s. */
const windows = new Map();
function secondsUntilAllowed(address) {
  const now = Date.now();
  let window = windows.get(address);
  if (!window || window.resetAt <= now) {
    if (windows.size >= 10_000) windows.clear();
    window = { count: 0, resetAt: now + 60_000 };
    windows.set(address, window);
  }
  window.count += 1;
  return window.count > ratePerMinute ? Math.ceil((window.resetAt - now) / 1000) : 0;
}

function route(req, res) {
  const url = new URL(req.url ?? "/", "http://localhost");
  const api = /^\/api\/([a-z-]+)$/.exec(url.pathname);
  if (api && FORWARDED.has(api[1])) {
    const refused = refusal(req);
    if (refused) {
      const [status, code, message] = refused;
      return sendJson(res, status, { code, message, status });
    }
    const wait = secondsUntilAllowed(req.socket.remoteAddress ?? "");
    if (wait > 0) {
      res.setHeader("retry-after", String(wait));
      return sendJson(res, 429, {
        code: "rate_limited",
        message: `Too many requests: at most ${ratePerMinute} a minute; try again in ${wait} s`,
        status: 429,
      });
    }
    return forward(req, res, api[1], url.search);
  }
  if (api)
    return sendJson(res, 404, {
      code: "not_found",
      message: `No such endpoint: ${url.pathname}`,
      status: 404,
    });
  if (req.method === "GET" || req.method === "HEAD") return serveStatic(req, res, url.pathname);
  return sendJson(res, 405, { message: "Method not allowed" });
}

const server = http.createServer((req, res) => {
  Promise.resolve(route(req, res)).catch((error) => {
    console.error(error);
    if (!res.headersSent) sendJson(res, 500, { message: "Internal error" });
    else res.destroy();
  });
});

server.listen(port, host, () => {
  const { port: actual } = server.address();
  const shown = LOOPBACK_HOSTS.has(host) ? "localhost" : host.includes(":") ? `[${host}]` : host;
  console.log(`Listening on http://${shown}:${actual}`);
  if (!LOOPBACK_HOSTS.has(host))
    console.warn(`Listening on ${host}: anyone who can reach it spends your key, within the rate limit.`);
  if (!apiKey) console.warn("PROMPTMINT_API_KEY is empty: put your key in .env (see README.md).");
});
