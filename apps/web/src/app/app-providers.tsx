import { type QueryClient, QueryClientProvider } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { Toaster } from "sonner";
import { RuntimeConfigGate } from "./runtime-config-gate";

export function AppProviders({ queryClient, children }: { queryClient: QueryClient; children: ReactNode }) {
  return (
    <QueryClientProvider client={queryClient}>
      <RuntimeConfigGate>{children}</RuntimeConfigGate>
      <Toaster position="top-right" richColors closeButton />
    </QueryClientProvider>
  );
}
