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
        {/* Below the sticky 64 px navbar: a toast must not cover the user menu (a pointer resting on a
            toast also pauses it, which kept the menu covered). */}
        <Toaster
          position="top-right"
          offset={{ top: 80, right: 24 }}
          mobileOffset={{ top: 76, right: 16, left: 16 }}
          richColors
          closeButton
        />
      </Suspense>
    </QueryClientProvider>
  );
}
