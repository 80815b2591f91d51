import { type QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { lazy, type ReactNode, Suspense } from "react";
import { RuntimeConfigGate } from "./runtime-config-gate";

// Toasts only follow an action, so their host loads beside the first screen, not in it.
const Toaster = lazy(() => import("sonner").then((module) => ({ default: module.Toaster })));

export function AppProviders({ queryClient, children }: { queryClient: QueryClient; children: ReactNode }) {
  return (
    <QueryClientProvider client={queryClient}>
      <RuntimeConfigGate>{children}</RuntimeConfigGate>
      <Suspense fallback={null}>
        <Toaster position="top-right" richColors closeButton />
      </Suspense>
    </QueryClientProvider>
  );
}
