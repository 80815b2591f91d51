import { type RuntimeConfig, RuntimeConfigSchema } from "@promptmint/contracts";
import { createContext, type ReactNode, useContext } from "react";
import { apiRequest } from "./api-client";

export const runtimeConfigQueryKey = ["runtime-config"] as const;

/** `GET /api/config`: the settings this host runs with (identity issuer, sandbox flags). */
export function fetchRuntimeConfig(signal?: AbortSignal): Promise<RuntimeConfig> {
  return apiRequest("/config", { schema: RuntimeConfigSchema, token: null, signal });
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
