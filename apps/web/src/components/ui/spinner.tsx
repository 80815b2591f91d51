import { cn } from "../../lib/cn";

/** A decorative spinning ring; pair it with text or use LoadingState for a labelled one. */
export function Spinner({ className }: { className?: string }) {
  return (
    <svg
      className={cn("size-5 animate-spin text-current", className)}
      viewBox="0 0 24 24"
      fill="none"
      aria-hidden="true"
    >
      <circle cx="12" cy="12" r="10" stroke="currentColor" strokeWidth="3" className="opacity-20" />
      <path d="M22 12a10 10 0 0 0-10-10" stroke="currentColor" strokeWidth="3" strokeLinecap="round" />
    </svg>
  );
}

/** A centred spinner with a label that screen readers announce. */
export function LoadingState({
  label = "Loading...",
  fullScreen = false,
  className,
}: {
  label?: string;
  fullScreen?: boolean;
  className?: string;
}) {
  return (
    <div
      role="status"
      className={cn(
        "flex flex-col items-center justify-center gap-3 text-sm text-slate-500",
        fullScreen ? "min-h-screen" : "py-16",
        className,
      )}
    >
      <Spinner className="size-8 text-brand-600" />
      <span>{label}</span>
    </div>
  );
}
