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
        {/* At the bottom: screens keep their actions at the top (page header, navbar, user menu), and a
            toast over them intercepted the next click (a pointer resting on a toast also pauses it,
            which kept it there). */}
        <Toaster
          position="bottom-right"
          offset={{ bottom: 24, right: 24 }}
          mobileOffset={{ bottom: 16, right: 16, left: 16 }}
          richColors
          closeButton
        />
      </Suspense>
    </QueryClientProvider>
  );
}
