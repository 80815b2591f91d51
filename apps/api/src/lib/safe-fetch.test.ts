import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "./errors.ts";
import { createSafeFetch, isPrivateAddress } from "./safe-fetch.ts";

// A listener that must never be reached while the guard is on.
let connections = 0;
let target: http.Server;
let port: number;
// A "public" redirector: reachable (127.0.0.1 is treated as public below), redirecting to 127.0.0.2.
let redirector: http.Server;
let redirectorPort: number;

beforeAll(async () => {
  target = http.createServer((_req, res) => res.end("secret"));
  target.on("connection", () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => target.listen(0, "0.0.0.0", resolve));
  port = (target.address() as AddressInfo).port;
  redirector = http.createServer((_req, res) => {
    res.writeHead(302, { location: `http://127.0.0.2:${port}/` });
    res.end();
  });
  await new Promise<void>((resolve) => redirector.listen(0, "127.0.0.1", resolve));
  redirectorPort = (redirector.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => target.close(resolve));
  await new Promise((resolve) => redirector.close(resolve));
});

const guarded = createSafeFetch({ allowPrivate: false, timeoutMs: 3000 });

async function expectRefused(url: string, fetcher = guarded) {
  const before = connections;
  const error = await fetcher(url).catch((e: unknown) => e);
  expect(error, url).toBeInstanceOf(AppError);
  expect((error as AppError).status, url).toBe(400);
  expect((error as AppError).message, url).toMatch(
    /private or reserved address|Only http and https|not a valid URL/,
  );
  expect(connections, url).toBe(before);
}

describe("the SSRF guard", () => {
  it("refuses loopback, link-local and metadata addresses in every notation", async () => {
    for (const url of [
      `http://127.0.0.1:${port}/`,
      `http://[::1]:${port}/`,
      "http://169.254.169.254/latest/meta-data/",
      `http://2130706433:${port}/`,
      `http://0x7f.1:${port}/`,
      `http://0177.0.0.1:${port}/`,
      `http://127.1:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://[::ffff:7f00:1]:${port}/`,
      `http://0.0.0.0:${port}/`,
      `http://10.0.0.5:${port}/`,
      `http://192.168.1.1:${port}/`,
      `http://172.16.0.1:${port}/`,
      `http://[fd00::1]:${port}/`,
      `http://[fe80::1]:${port}/`,
      `http://localhost:${port}/`,
      `http://localhost.:${port}/`,
      `http://[::127.0.0.1]:${port}/`,
      "file:///etc/passwd",
      "gopher://127.0.0.1:70/",
    ]) {
      await expectRefused(url);
    }
  });

  it("refuses a public-looking name that resolves to a private address, checked at connect time", async () => {
    const rebinding = createSafeFetch({
      allowPrivate: false,
      timeoutMs: 3000,
      lookup: ((
        _host: string,
        _options: unknown,
        callback: (e: null, a: { address: string; family: number }[]) => void,
      ) => callback(null, [{ address: "127.0.0.1", family: 4 }])) as never,
    });
    await expectRefused(`http://totally-public.example:${port}/`, rebinding);
  });

  it("refuses a redirect to a private address", async () => {
    // Only 127.0.0.2 counts as private here, so the redirector itself is reachable.
    const fetcher = createSafeFetch({
      allowPrivate: false,
      timeoutMs: 3000,
      isBlocked: (ip) => ip === "127.0.0.2",
    });
    const before = connections;
    const error = await fetcher(`http://127.0.0.1:${redirectorPort}/`).catch((e: unknown) => e);
    expect((error as AppError).message).toMatch(/private or reserved address/);
    expect(connections).toBe(before);
  });

  it("lets private addresses through when ALLOW_PRIVATE_UPSTREAMS is on, and caps response size", async () => {
    const open = createSafeFetch({ allowPrivate: true, timeoutMs: 3000 });
    const response = await open(`http://127.0.0.1:${port}/`);
    expect(await response.text()).toBe("secret");
    const tiny = createSafeFetch({ allowPrivate: true, timeoutMs: 3000, maxResponseBytes: 3 });
    await expect((await tiny(`http://127.0.0.1:${port}/`)).text()).rejects.toThrow(/exceeded/);
  });

  it("classifies addresses", () => {
    expect(isPrivateAddress("8.8.8.8")).toBe(false);
    expect(isPrivateAddress("2606:4700:4700::1111")).toBe(false);
    expect(isPrivateAddress("100.64.0.1")).toBe(true);
    expect(isPrivateAddress("::ffff:10.0.0.1")).toBe(true);
    expect(isPrivateAddress("::ffff:8.8.8.8")).toBe(false);
  });
});
