import { useId } from "react";
import { cn } from "../../lib/cn";
import { CopyButton } from "./copy-button";
import { inputClasses } from "./text-field";

/**
 * A secret to copy: a read-only monospace input (selected on focus) and a Copy button. The input
 * takes its height from padding and a 1.6 line, not a fixed h-10, so underscores are not clipped.
 */
export function SecretField({
  label,
  value,
  describedBy,
  className,
}: {
  /** The input's accessible name (visually hidden). */
  label: string;
  value: string;
  describedBy?: string;
  className?: string;
}) {
  const id = useId();
  return (
    <div className={cn("flex flex-col gap-2 sm:flex-row", className)}>
      <label htmlFor={id} className="sr-only">
        {label}
      </label>
      <input
        id={id}
        readOnly
        value={value}
        aria-describedby={describedBy}
        onFocus={(event) => event.currentTarget.select()}
        className={cn(inputClasses.replace("h-10 ", ""), "py-2 font-mono text-xs leading-[1.6] sm:text-sm")}
      />
      <CopyButton text={value} className="h-10 shrink-0" />
    </div>
  );
}
