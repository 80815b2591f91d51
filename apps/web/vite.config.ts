import tailwindcss from "@tailwindcss/vite";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// In development the API, the embedded issuer and the health check run on the API server;
// the Host header is kept so the issuer sees the origin the browser uses.
const apiServer = "http://localhost:3000";

export default defineConfig({
  plugins: [react(), tailwindcss()],
  server: {
    port: 5173,
    proxy: {
      "/api": apiServer,
      "/oidc": apiServer,
      "/healthz": apiServer,
    },
  },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // bench/web reads it to measure the JS each route loads first.
    manifest: true,
    // No <link rel="modulepreload"> injected before each dynamic import: creating ~30 of them at
    // once for the dashboard held the main thread for tens of milliseconds after the first paint
    // (Lighthouse mobile TBT). The browser finds a chunk's imports itself, one level at a time;
    // the first paint does not wait for any of it (docs/decisions/016).
    modulePreload: false,
    rollupOptions: {
      onLog(level, log, handler) {
        // The profile schema is imported dynamically so the public pages' first load has no zod
        // (lib/profile-query.ts); the bundler keeps it in the lazily loaded contracts chunk the
        // signed-in pages share, which is what that import is for. The warning says nothing a
        // person starting the product could act on.
        // The same for the organizations' list, read by the nav's account switcher.
        if (
          log.code === "INEFFECTIVE_DYNAMIC_IMPORT" &&
          /contracts\/src\/(auth|organizations)\.ts/.test(log.message)
        )
          return;
        handler(level, log);
      },
    },
  },
});
