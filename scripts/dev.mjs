// `npm run dev`: the API (restarting on change) on :3000 and Vite with hot reload on :5173,
// which proxies /api and /oidc to the API. Open http://localhost:5173.
import { spawn } from "node:child_process";

const children = [
  spawn(
    "node",
    ["--watch-path=apps/api/src", "--watch-path=packages/contracts/src", "apps/api/src/main.ts"],
    {
      stdio: "inherit",
      env: { ...process.env, PORT: process.env.PORT ?? "3000" },
    },
  ),
  spawn("npm", ["run", "dev", "-w", "@promptmint/web"], { stdio: "inherit" }),
];
const stop = () => {
  for (const child of children) child.kill("SIGTERM");
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
for (const child of children) child.on("exit", (code) => code && code !== 0 && stop());
console.log("\n  Dev: open http://localhost:5173 (API on http://localhost:3000)\n");
