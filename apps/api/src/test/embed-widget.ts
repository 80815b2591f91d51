import { expect } from "vitest";
import type { Caller } from "./caller.ts";

/**
 * An embed app and its widget's calls, as a browser on `shop` (an allowed origin) makes them.
 * Each call comes from a fresh visitor address (X-Forwarded-For, trusted from loopback by
 * default) unless `ip` is given. `platformUrl` is PUBLIC_URL, when the server is reached elsewhere.
 */
export function embedWidget(baseUrl: string, shop: string, platformUrl = baseUrl) {
  let visitorAddress = 0;

  async function createEmbedApp(
    owner: Caller,
    options: { origins?: string[]; visibility?: string; mode?: string; prompt?: object } = {},
  ) {
    const created = await owner.api("POST", "/api/app/", {
      body: {
        name: `Embed ${Math.random().toString(36).slice(2, 8)}`,
        interaction_mode: options.mode ?? "chat",
        visibility: options.visibility ?? "embed",
        price_cents: 25,
      },
    });
    expect(created.status).toBe(201);
    const slug = created.body.slug as string;
    const prompt = { model: "gpt-4-turbo", ...options.prompt };
    expect((await owner.api("PATCH", `/api/app/${slug}/prompt/`, { body: prompt })).status).toBe(200);
    await owner.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } });
    const saved = await owner.api("PUT", `/api/app/${slug}/embed`, {
      body: { allowed_origins: options.origins ?? [shop] },
    });
    expect(saved.status).toBe(200);
    return { slug, id: created.body.id as string };
  }

  /** The widget page as a browser frames it from `hostPage`; its token when it was issued one. */
  async function loadWidget(slug: string, hostPage?: string) {
    const response = await fetch(`${baseUrl}/embed/${slug}`, {
      headers: hostPage ? { referer: hostPage } : {},
    });
    const html = await response.text();
    const config = /<script type="application\/json" id="promptmint-embed">(.*?)<\/script>/s.exec(html)?.[1];
    return {
      status: response.status,
      csp: response.headers.get("content-security-policy") ?? "",
      html,
      token: config ? (JSON.parse(config).token as string) : undefined,
    };
  }

  /** A widget call from `origin` (default: the widget itself), from a fresh visitor address unless `ip` is given. */
  async function sendMessage(
    slug: string,
    token: string | undefined,
    options: { origin?: string | null; ip?: string; body?: object; method?: string } = {},
  ) {
    const preflight = options.method === "OPTIONS";
    const headers: Record<string, string> = { "x-forwarded-for": options.ip ?? `10.0.0.${++visitorAddress}` };
    if (!preflight) headers["content-type"] = "application/json";
    if (token) headers.authorization = `Embed ${token}`;
    const origin = options.origin === undefined ? platformUrl : options.origin;
    if (origin) headers.origin = origin;
    const response = await fetch(`${baseUrl}/api/embed/${slug}/messages`, {
      method: options.method ?? "POST",
      headers,
      body: preflight ? undefined : JSON.stringify(options.body ?? { query: "Hello there" }),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  }

  return { createEmbedApp, loadWidget, sendMessage };
}

export type EmbedWidget = ReturnType<typeof embedWidget>;
