import { AlertTriangle, CheckCircle2, Info, XCircle } from "lucide-react";
import type { ReactNode } from "react";
import { cn } from "../../lib/cn";

export type AlertTone = "error" | "success" | "warning" | "info";

const tones: Record<AlertTone, { box: string; icon: typeof Info }> = {
  error: { box: "border-red-200 bg-red-50 text-red-800", icon: XCircle },
  success: { box: "border-green-200 bg-green-50 text-green-800", icon: CheckCircle2 },
  warning: { box: "border-amber-200 bg-amber-50 text-amber-900", icon: AlertTriangle },
  info: { box: "border-brand-200 bg-brand-50 text-brand-900", icon: Info },
};

/**
 * A banner. Errors are announced immediately (role alert), success politely (role status);
 * warnings and notes are plain content unless a role is given.
 */
export function Alert({
  tone,
  title,
  children,
  role,
  className,
}: {
  tone: AlertTone;
  title?: ReactNode;
  children?: ReactNode;
  role?: "alert" | "status" | "note";
  className?: string;
}) {
  const { box, icon: Icon } = tones[tone];
  const defaultRole = tone === "error" ? "alert" : tone === "success" ? "status" : undefined;
  return (
    <div
      role={role ?? defaultRole}
      className={cn("flex gap-3 rounded-lg border px-4 py-3 text-sm", box, className)}
    >
      <Icon className="mt-0.5 size-4 shrink-0" aria-hidden="true" />
      <div className="min-w-0 space-y-1">
        {title && <p className="font-semibold">{title}</p>}
        {children && <div className="break-words">{children}</div>}
      </div>
    </div>
  );
}
