import { cleanup } from "@testing-library/react";
import { afterEach, beforeEach, type MockInstance, vi } from "vitest";

// jsdom lays nothing out and does not scroll; every navigation sets the scroll position
// (RootLayout's ScrollRestoration). A test that checks it stubs its own.
window.scrollTo = () => undefined;

// Web tests fail on any console.error: React warnings (act, keys, DOM nesting) are bugs here.
let consoleError: MockInstance<typeof console.error>;

beforeEach(() => {
  consoleError = vi.spyOn(console, "error");
});

afterEach(() => {
  cleanup();
  const calls = consoleError.mock.calls;
  consoleError.mockRestore();
  vi.useRealTimers();
  vi.unstubAllGlobals();
  window.localStorage.clear();
  window.sessionStorage.clear();
  if (calls.length > 0) {
    const messages = calls.map((args) => args.map(String).join(" ")).join("\n");
    throw new Error(`console.error was called during the test:\n${messages}`);
  }
});
