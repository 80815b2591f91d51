import * as TabsPrimitive from "@radix-ui/react-tabs";
import type { ComponentProps } from "react";
import { cn } from "../../lib/cn";
import { EdgeFades, useHorizontalOverflow } from "./scroll-area";

/** Radix tabs (arrow keys move between tabs) with the app's look. */
export const Tabs = TabsPrimitive.Root;

/**
 * The tab strip scrolls sideways when its tabs do not fit (a phone), with the edge that hides
 * more tabs faded out, so a cut-off strip reads as one that continues.
 */
export function TabsList({ className, ...rest }: ComponentProps<typeof TabsPrimitive.List>) {
  const { ref, overflow } = useHorizontalOverflow();
  return (
    <div className={cn("relative -mx-4 mb-6 sm:mx-0", className)}>
      <TabsPrimitive.List
        ref={ref}
        className="flex gap-1 overflow-x-auto border-b border-slate-200 px-4 [scrollbar-width:none] sm:px-0"
        {...rest}
      />
      <EdgeFades overflow={overflow} />
    </div>
  );
}

export function TabsTrigger({ className, ...rest }: ComponentProps<typeof TabsPrimitive.Trigger>) {
  return (
    <TabsPrimitive.Trigger
      className={cn(
        "-mb-px shrink-0 border-b-2 border-transparent px-3 py-2.5 text-sm font-medium whitespace-nowrap text-slate-500 transition-colors",
        "hover:text-slate-800 focus-visible:outline-2 focus-visible:outline-offset-[-2px] focus-visible:outline-brand-600",
        "data-[state=active]:border-brand-600 data-[state=active]:text-brand-700",
        className,
      )}
      {...rest}
    />
  );
}

/** A screen's sections as tabs: each section's value and the label its tab shows, in order. */
export function SectionTabsList({ label, sections }: { label: string; sections: Record<string, string> }) {
  return (
    <TabsList aria-label={label}>
      {Object.entries(sections).map(([value, title]) => (
        <TabsTrigger key={value} value={value}>
          {title}
        </TabsTrigger>
      ))}
    </TabsList>
  );
}

export function TabsContent({ className, ...rest }: ComponentProps<typeof TabsPrimitive.Content>) {
  return <TabsPrimitive.Content className={cn("focus-visible:outline-none", className)} {...rest} />;
}
