import react from "@vitejs/plugin-react";
import { defineProject } from "vitest/config";

export default defineProject({
  plugins: [react()],
  test: {
    name: "web",
    environment: "jsdom",
    include: ["src/**/*.test.{ts,tsx}"],
    setupFiles: ["./src/test/setup.ts"],
    // jsdom renders with user-event typing take 0.5–2 s alone; on a loaded two-core machine (a run
    // beside the integration suite) some took 8 s and failed the 5 s default without any bug.
    testTimeout: 20_000,
  },
});
