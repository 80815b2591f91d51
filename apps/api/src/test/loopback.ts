import type http from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * Starts `server` on a free loopback port. `close` cuts every open connection first: a stream
 * left hanging would keep server.close() waiting for it.
 */
export async function listenOnLoopback(
  server: http.Server,
): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
