import http from "node:http";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createSseWriter } from "./sse-writer.ts";

let server: http.Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A stream that writes 16 KiB events as fast as its writer lets it, to a client that reads or not. */
async function streamTo(read: boolean) {
  let written = 0;
  let finished: (result: { delivered: boolean; destroyed: boolean; written: number }) => void = () => {};
  const outcome = new Promise<{ delivered: boolean; destroyed: boolean; written: number }>((resolve) => {
    finished = resolve;
  });
  server = http.createServer(async (_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    const writer = createSseWriter(res, { maxBufferedBytes: 256 * 1024, stallMs: 300 });
    const event = `data: ${"x".repeat(16 * 1024)}\n\n`;
    let delivered = true;
    // 64 MiB: far more than any socket buffer holds.
    while (written < 64 * 1024 * 1024 && delivered) {
      delivered = await writer.write(event);
      if (delivered) written += event.length;
    }
    if (delivered) res.end();
    finished({ delivered, destroyed: res.destroyed, written });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  const socket = net.connect(port, "127.0.0.1", () => socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  socket.on("error", () => {});
  if (read) socket.resume();
  else socket.pause();
  const result = await outcome;
  socket.destroy();
  return result;
}

describe("the SSE writer", () => {
  it("drops a client that stops reading instead of buffering the stream in memory", async () => {
    const began = Date.now();
    const result = await streamTo(false);
    expect(result.delivered).toBe(false);
    expect(result.destroyed).toBe(true);
    // What the kernel's socket buffers took, not the 64 MiB the stream had to send.
    expect(result.written).toBeLessThan(16 * 1024 * 1024);
    // A 300 ms stall limit: far below 30 s, which only a writer that waits on the reader can reach.
    expect(Date.now() - began).toBeLessThan(30_000);
  });

  it("delivers everything to a client that reads", async () => {
    const result = await streamTo(true);
    expect(result.delivered).toBe(true);
    expect(result.written).toBeGreaterThanOrEqual(64 * 1024 * 1024);
  });
});
