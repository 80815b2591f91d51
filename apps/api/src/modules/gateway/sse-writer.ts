import type { ServerResponse } from "node:http";

/** Bytes a stream may have waiting for its client before the client is considered gone. */
export const STREAM_BUFFER_BYTES = 1024 * 1024;
/** How long a stream waits for a client that stopped reading before dropping it. */
export const STREAM_STALL_MS = 30_000;

export interface SseWriter {
  /**
   * Writes one event. When the client is behind, waits until it catches up; a client that stays
   * behind longer than `stallMs`, or lets more than `maxBufferedBytes` pile up, is dropped (the
   * response is destroyed, which its 'close' listeners see). False once the client is gone.
   */
  write(text: string): Promise<boolean>;
  /** Writes without waiting (pings); skipped while the client is behind. */
  writeIfReady(text: string): void;
}

/**
 * Server-sent events with backpressure: without it, a client that opens a stream and never
 * reads makes the server buffer the whole answer (and every ping) in memory.
 */
export function createSseWriter(
  raw: ServerResponse,
  { maxBufferedBytes = STREAM_BUFFER_BYTES, stallMs = STREAM_STALL_MS } = {},
): SseWriter {
  const gone = () => raw.destroyed || raw.writableEnded;
  const drop = () => {
    if (!raw.destroyed) raw.destroy();
  };
  return {
    async write(text) {
      if (gone()) return false;
      if (raw.write(text)) return true;
      if (raw.writableLength > maxBufferedBytes) {
        drop();
        return false;
      }
      const drained = await new Promise<boolean>((resolve) => {
        const done = (value: boolean) => {
          clearTimeout(timer);
          raw.off("drain", onDrain);
          raw.off("close", onClose);
          resolve(value);
        };
        const onDrain = () => done(true);
        const onClose = () => done(false);
        const timer = setTimeout(() => done(false), stallMs);
        raw.once("drain", onDrain);
        raw.once("close", onClose);
      });
      if (!drained) drop();
      return drained && !gone();
    },
    writeIfReady(text) {
      if (gone() || raw.writableNeedDrain) return;
      raw.write(text);
    },
  };
}
