import { cleanup, configure } from "@testing-library/react";
import { afterEach, beforeEach, type MockInstance, vi } from "vitest";

// jsdom lays nothing out and does not scroll; every navigation sets the scroll position
// (RootLayout's ScrollRestoration). A test that checks it stubs its own.
window.scrollTo = () => undefined;

// findBy* and waitFor give up after 1 s by default: a page that renders in 50 ms alone took over a
// second while the integration suite loaded both cores (a CI run beside it), and a test failed with
// nothing wrong. They return as soon as what they wait for is there, so a longer bound costs a
// passing test nothing; a missing element still fails, after 5 s.
configure({ asyncUtilTimeout: 5_000 });

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
