import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { LoadingState } from "../components/ui/spinner";
import { AuthNotConfiguredPage } from "../features/auth/auth-not-configured-page";
import {
  fetchRuntimeConfig,
  isIdentityConfigured,
  RuntimeConfigProvider,
  readInlineRuntimeConfig,
  runtimeConfigQueryKey,
} from "../lib/runtime-config";
import { OidcAuthProvider } from "./oidc-auth-provider";

/** Loads `GET /api/config` once, then starts sign-in with it, or explains what is missing. */
export function RuntimeConfigGate({ children }: { children: ReactNode }) {
  const config = useQuery({
    queryKey: runtimeConfigQueryKey,
    queryFn: ({ signal }) => fetchRuntimeConfig(signal),
    initialData: readInlineRuntimeConfig,
    staleTime: Number.POSITIVE_INFINITY,
  });

  if (config.isPending) return <LoadingState label="Loading Promptmint..." fullScreen />;
  if (config.isError || !isIdentityConfigured(config.data)) return <AuthNotConfiguredPage />;

  return (
    <RuntimeConfigProvider config={config.data}>
      <OidcAuthProvider config={config.data}>{children}</OidcAuthProvider>
    </RuntimeConfigProvider>
  );
}
