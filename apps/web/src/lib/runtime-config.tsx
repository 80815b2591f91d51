import type { RuntimeConfig } from "@promptmint/contracts";
import { createContext, type ReactNode, useContext } from "react";
import { apiRequest } from "./api-client";

export const runtimeConfigQueryKey = ["runtime-config"] as const;

/** `GET /api/config`: the settings this host runs with (identity issuer, sandbox flags). */
export async function fetchRuntimeConfig(signal?: AbortSignal): Promise<RuntimeConfig> {
  const { RuntimeConfigSchema } = await import("@promptmint/contracts/config");
  return apiRequest("/config", { schema: RuntimeConfigSchema, token: null, signal });
}

/**
 * The same settings as `GET /api/config`, written into the page by the server that served it
 * (apps/api/src/app.ts), so the app starts without a round trip. Absent under the Vite dev
 * server, where the request is made instead.
 */
export function readInlineRuntimeConfig(): RuntimeConfig | undefined {
  const text = document.getElementById("runtime-config")?.textContent;
  if (!text) return undefined;
  try {
    const config = JSON.parse(text) as RuntimeConfig;
    return typeof config?.oidc === "object" && typeof config.sandbox === "object" ? config : undefined;
  } catch {
    return undefined;
  }
}

/** Sign-in needs both the issuer and the client id (SPEC §2, 'Authentication Not Configured'). */
export function isIdentityConfigured(config: RuntimeConfig): boolean {
  return Boolean(config.oidc.issuer && config.oidc.client_id);
}

const RuntimeConfigContext = createContext<RuntimeConfig | null>(null);

export function RuntimeConfigProvider({ config, children }: { config: RuntimeConfig; children: ReactNode }) {
  return <RuntimeConfigContext value={config}>{children}</RuntimeConfigContext>;
}

export function useRuntimeConfig(): RuntimeConfig {
  const config = useContext(RuntimeConfigContext);
  if (!config) throw new Error("useRuntimeConfig must be used inside RuntimeConfigProvider");
  return config;
}
