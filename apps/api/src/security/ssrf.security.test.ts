import type { LookupAddress } from "node:dns";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../lib/errors.ts";
import { createSafeFetch, isPrivateAddress } from "../lib/safe-fetch.ts";
import { type Caller, createCaller } from "../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../test/database.ts";
import { startTestServer, type TestServer } from "../test/server.ts";
import { recordSecurityFigure } from "./report.ts";

// Every connection to this machine's addresses on `port` is counted: it must stay at zero.
let connections = 0;
let listener: net.Server;
let port: number;
let urlsTried = 0;

let testDb: TestDatabase;
let server: TestServer;
let creator: Caller;

beforeAll(async () => {
  listener = net.createServer((socket) => {
    connections += 1;
    socket.end('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{"answer":"secret"}');
  });
  // Dual stack: IPv4 (every 127/8 address, this host's private addresses) and IPv6 loopback.
  await new Promise<void>((resolve) => listener.listen({ port: 0, host: "::", ipv6Only: false }, resolve));
  port = (listener.address() as net.AddressInfo).port;
  testDb = await createTestDatabase();
  server = await startTestServer(testDb, { env: { ALLOW_PRIVATE_UPSTREAMS: "false" } });
  creator = await createCaller(server.baseUrl, "SSRF Creator");
});
afterAll(async () => {
  recordSecurityFigure("ssrf_urls_tried", urlsTried);
  recordSecurityFigure("ssrf_connections_seen", connections);
  await server?.stop();
  await testDb?.destroy();
  await new Promise((resolve) => listener?.close(resolve));
});

/** Internal targets in every notation the URL parser, the resolver or a redirect could turn into one. */
function internalTargets(): string[] {
  const p = port;
  const hostAddresses = Object.values(os.networkInterfaces())
    .flat()
    .filter((entry) => entry && !entry.internal && entry.family === "IPv4")
    .map((entry) => entry?.address as string);
  return [
    // IPv4 loopback in every notation
    `http://127.0.0.1:${p}/`,
    `http://127.0.0.2:${p}/`,
    `http://127.255.255.254:${p}/`,
    `http://2130706433:${p}/`,
    `http://0x7f000001:${p}/`,
    `http://0x7f.0x0.0x0.0x1:${p}/`,
    `http://0177.0.0.1:${p}/`,
    `http://017700000001:${p}/`,
    `http://127.1:${p}/`,
    `http://127.0.1:${p}/`,
    `http://0x7f.1:${p}/`,
    `http://127.000.000.001:${p}/`,
    `https://127.0.0.1:${p}/`,
    `http://127.0.0.1.:${p}/`,
    // "this host"
    `http://0.0.0.0:${p}/`,
    `http://0:${p}/`,
    `http://0x0:${p}/`,
    // RFC 1918, CGNAT, link-local / cloud metadata
    `http://10.0.0.1:${p}/`,
    `http://167772161:${p}/`,
    `http://012.0.0.1:${p}/`,
    `http://172.16.0.1:${p}/`,
    `http://172.31.255.254:${p}/`,
    `http://192.168.0.1:${p}/`,
    `http://0xc0a80001:${p}/`,
    `http://100.64.0.1:${p}/`,
    "http://169.254.169.254/latest/meta-data/",
    "http://2852039166/latest/meta-data/",
    "http://0xa9fea9fe/computeMetadata/v1/",
    ...hostAddresses.map((address) => `http://${address}:${p}/`),
    // IPv6 loopback, unspecified, ULA, link-local, site-local, multicast
    `http://[::1]:${p}/`,
    `http://[0:0:0:0:0:0:0:1]:${p}/`,
    `http://[::]:${p}/`,
    `http://[fd00::1]:${p}/`,
    `http://[fc00::1]:${p}/`,
    `http://[fe80::1]:${p}/`,
    `http://[fec0::1]:${p}/`,
    `http://[ff02::1]:${p}/`,
    // IPv4 inside IPv6: mapped, compatible, translated, NAT64, 6to4
    `http://[::ffff:127.0.0.1]:${p}/`,
    `http://[::ffff:7f00:1]:${p}/`,
    `http://[0:0:0:0:0:ffff:127.0.0.1]:${p}/`,
    `http://[::ffff:10.0.0.1]:${p}/`,
    `http://[::ffff:169.254.169.254]/`,
    `http://[::127.0.0.1]:${p}/`,
    `http://[::ffff:0:127.0.0.1]:${p}/`,
    `http://[64:ff9b::127.0.0.1]:${p}/`,
    `http://[2002:7f00:1::]:${p}/`,
    // Names that resolve to private addresses
    `http://localhost:${p}/`,
    `http://LOCALHOST:${p}/`,
    `http://localhost.:${p}/`,
    `http://api.localhost:${p}/`,
    `http://${os.hostname()}:${p}/`,
    "http://metadata.google.internal/computeMetadata/v1/",
    `http://printer.local:${p}/`,
    // Credentials and other schemes
    `http://user:pass@127.0.0.1:${p}/`,
    `http://example.com@127.0.0.1:${p}/`,
    "file:///etc/passwd",
    `gopher://127.0.0.1:${p}/_GET%20/`,
    `ftp://127.0.0.1:${p}/`,
    `dict://127.0.0.1:${p}/`,
    `ws://127.0.0.1:${p}/`,
    "data:text/plain,hello",
    "javascript:alert(1)",
  ];
}

describe("the SSRF guard, with ALLOW_PRIVATE_UPSTREAMS off", () => {
  const guarded = createSafeFetch({ allowPrivate: false, timeoutMs: 3000 });

  it("refuses 60+ internal targets through safe-fetch without opening a connection", async () => {
    const targets = internalTargets();
    expect(targets.length).toBeGreaterThanOrEqual(60);
    for (const url of targets) {
      urlsTried += 1;
      const error = await guarded(url, { method: "POST", body: "{}" }).catch((e: unknown) => e);
      expect(error, url).toBeInstanceOf(AppError);
      // Refused by the guard itself (400), not merely failing to connect.
      expect((error as AppError).status, `${url}: ${(error as AppError).message}`).toBe(400);
      expect(connections, url).toBe(0);
    }
  });

  it("refuses names whose resolver answers with a private address, checked at connect time", async () => {
    const answers: Record<string, LookupAddress[]> = {
      "loopback.example": [{ address: "127.0.0.1", family: 4 }],
      "ten.example": [{ address: "10.1.2.3", family: 4 }],
      "v6.example": [{ address: "::1", family: 6 }],
      "mapped.example": [{ address: "::ffff:127.0.0.1", family: 6 }],
      "mixed.example": [
        { address: "93.184.216.34", family: 4 },
        { address: "127.0.0.1", family: 4 },
      ],
    };
    const lookups: string[] = [];
    const fetcher = createSafeFetch({
      allowPrivate: false,
      timeoutMs: 3000,
      lookup: ((host: string, _options: unknown, callback: (e: null, a: LookupAddress[]) => void) => {
        lookups.push(host);
        callback(null, answers[host] ?? []);
      }) as never,
    });
    for (const host of Object.keys(answers)) {
      urlsTried += 1;
      const error = await fetcher(`http://${host}:${port}/`).catch((e: unknown) => e);
      expect(error, host).toBeInstanceOf(AppError);
      expect((error as AppError).status, host).toBe(400);
    }
    expect(lookups).toEqual(Object.keys(answers));
    expect(connections).toBe(0);
  });

  it("is not fooled by DNS rebinding: a name public at first and private the next time", async () => {
    // A "public" server (127.0.0.1, treated as public here) that sends the caller back to the same
    // name, which now resolves to 127.0.0.2, where the counting listener waits.
    let redirects = 0;
    const redirector = http.createServer((_req, res) => {
      redirects += 1;
      res.writeHead(307, { location: `http://rebind.example:${port}/` }).end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, "127.0.0.1", resolve));
    const redirectorPort = (redirector.address() as net.AddressInfo).port;
    let lookupsDone = 0;
    const fetcher = createSafeFetch({
      allowPrivate: false,
      timeoutMs: 3000,
      isBlocked: (address) => address !== "127.0.0.1" && isPrivateAddress(address),
      lookup: ((_host: string, _options: unknown, callback: (e: null, a: LookupAddress[]) => void) => {
        lookupsDone += 1;
        callback(null, [{ address: lookupsDone === 1 ? "127.0.0.1" : "127.0.0.2", family: 4 }]);
      }) as never,
    });
    try {
      urlsTried += 1;
      const error = await fetcher(`http://rebind.example:${redirectorPort}/`, {
        method: "POST",
        body: "{}",
      }).catch((e: unknown) => e);
      expect(redirects).toBe(1);
      expect(lookupsDone).toBe(2);
      expect((error as AppError).status).toBe(400);
      expect(connections).toBe(0);
    } finally {
      await new Promise((resolve) => redirector.close(resolve));
    }
  });

  it("refuses a 30x from a public server to an internal target, for every redirect status", async () => {
    const targets = [
      `http://127.0.0.2:${port}/`,
      `http://[::1]:${port}/`,
      `http://localhost:${port}/`,
      `http://0x7f000002:${port}/`,
    ];
    const redirector = http.createServer((req, res) => {
      const [status, index] = (req.url ?? "").slice(1).split("/");
      res.writeHead(Number(status), { location: targets[Number(index)] }).end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, "127.0.0.1", resolve));
    const redirectorPort = (redirector.address() as net.AddressInfo).port;
    const fetcher = createSafeFetch({
      allowPrivate: false,
      timeoutMs: 3000,
      // The redirector's address counts as public here; the targets are elsewhere in 127/8.
      isBlocked: (address) => address !== "127.0.0.1" && isPrivateAddress(address),
    });
    try {
      for (const status of [301, 302, 303, 307, 308]) {
        for (const index of targets.keys()) {
          urlsTried += 1;
          const error = await fetcher(`http://127.0.0.1:${redirectorPort}/${status}/${index}`).catch(
            (e: unknown) => e,
          );
          expect(error, `${status} → ${targets[index]}`).toBeInstanceOf(AppError);
        }
      }
      expect(connections).toBe(0);
    } finally {
      await new Promise((resolve) => redirector.close(resolve));
    }
  });

  it("refuses every internal target through a workflow app's Test Config and its paid gateway call", async () => {
    const created = await creator.api("POST", "/api/app/", {
      body: {
        name: "SSRF probe",
        type: "workflow",
        visibility: "public",
        provider_config: { app_id: "a", api_key: "k-0000" },
      },
    });
    expect(created.status).toBe(201);
    const slug = created.body.slug as string;
    const targets = internalTargets();
    for (const url of targets) {
      urlsTried += 1;
      const tested = await creator.api("POST", `/api/app/${slug}/workflow/test-config/`, {
        // Promoted: the saved target is what the next call runs (docs/decisions/060).
        body: { provider: "webhook", provider_config: { url }, promote: true },
      });
      expect(tested.status === 200 && tested.body.success === true, url).toBe(false);
    }
    expect(connections).toBe(0);

    // The same targets saved as the app's endpoint and called through the gateway.
    await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } });
    let saved = 0;
    for (const url of targets.filter((u) => u.startsWith("http"))) {
      const patched = await creator.api("PATCH", `/api/app/${slug}/workflow/`, {
        // Promoted: the saved target is what the next call runs (docs/decisions/060).
        body: { provider: "webhook", provider_config: { url }, promote: true },
      });
      if (patched.status !== 200) continue;
      saved += 1;
      urlsTried += 1;
      const called = await creator.api("POST", `/api/app/${slug}/completion-messages`, {
        body: { inputs: {}, query: "hi", response_mode: "blocking" },
      });
      expect(called.status, url).toBeGreaterThanOrEqual(400);
    }
    expect(saved).toBeGreaterThan(40);
    expect(connections).toBe(0);
  });
});
