/**
 * The streamed calls in flight in this process, by task id (the call's message id), so that
 * their caller can stop them (Dify's `…/:task_id/stop`). A stream lives in one process and so
 * does its entry: a stop that reaches another process finds nothing to stop (docs/decisions/031).
 */
export interface RunningTasks {
  /** Registers a stream for its owner; its signal aborts when the owner stops it. `done` forgets it. */
  start(taskId: string, owner: string): { signal: AbortSignal; done(): void };
  /** Stops the owner's task if this process runs it; another caller's task is left alone. */
  stop(taskId: string, owner: string): boolean;
}

export function createRunningTasks(): RunningTasks {
  const running = new Map<string, { owner: string; controller: AbortController }>();
  return {
    start(taskId, owner) {
      const controller = new AbortController();
      running.set(taskId, { owner, controller });
      return { signal: controller.signal, done: () => running.delete(taskId) };
    },
    stop(taskId, owner) {
      const task = running.get(taskId);
      if (!task || task.owner !== owner) return false;
      task.controller.abort();
      return true;
    },
  };
}

/**
 * The chunks until the signal aborts: a stopped stream ends at once, even while the next chunk
 * is still awaited (the upstream iterator is then closed).
 */
export async function* untilAborted<T>(chunks: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const iterator = chunks[Symbol.asyncIterator]();
  const aborted = new Promise<IteratorResult<T>>((resolve) => {
    if (signal.aborted) resolve({ done: true, value: undefined });
    signal.addEventListener("abort", () => resolve({ done: true, value: undefined }), { once: true });
  });
  try {
    while (!signal.aborted) {
      const pending = iterator.next();
      // Left pending when the signal wins: its failure must not end the process.
      pending.catch(() => {});
      const next = await Promise.race([pending, aborted]);
      if (next.done) return;
      yield next.value;
    }
  } finally {
    iterator.return?.()?.catch(() => {});
  }
}
