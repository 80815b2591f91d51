import { type ReactNode, useId } from "react";
import { cn } from "../../lib/cn";

/**
 * The ids that tie a control to its label, help text and validation message, and the attributes
 * a control takes from them.
 */
export function useFieldDescription(id: string | undefined, hint?: string, error?: string) {
  const generatedId = useId();
  const controlId = id ?? generatedId;
  // An error replaces the hint (FieldMessages), so the control is described by one of them.
  const hintId = hint && !error ? `${controlId}-hint` : undefined;
  const errorId = error ? `${controlId}-error` : undefined;
  const describedBy = [errorId, hintId].filter(Boolean).join(" ") || undefined;
  return {
    controlId,
    // For a control that is not a form element (a code editor): its label is a named div.
    labelId: `${controlId}-label`,
    hintId,
    errorId,
    describedBy,
    controlProps: {
      id: controlId,
      "aria-invalid": error ? true : undefined,
      "aria-describedby": describedBy,
    },
  };
}

export type FieldDescription = ReturnType<typeof useFieldDescription>;

export function FieldMessages({
  hint,
  hintId,
  error,
  errorId,
}: {
  hint?: string;
  hintId?: string;
  error?: string;
  errorId?: string;
}) {
  return (
    <>
      {error && (
        <p id={errorId} className="text-sm text-red-600">
          {error}
        </p>
      )}
      {/* An error replaces the hint: one message under a field, the one that applies now. */}
      {hint && !error && (
        <p id={hintId} className="text-xs text-slate-500">
          {hint}
        </p>
      )}
    </>
  );
}

/**
 * A field's frame: its label, the control, then its validation message and help text. A form
 * element is labelled with `<label for>`; a code editor (`labelledBy`) by a div it names.
 */
export function FieldFrame({
  field,
  label,
  hint,
  error,
  labelledBy = false,
  className,
  children,
}: {
  field: FieldDescription;
  label: ReactNode;
  hint?: string;
  error?: string;
  labelledBy?: boolean;
  className?: string;
  children: ReactNode;
}) {
  return (
    <div className={cn("space-y-1.5", className)}>
      {labelledBy ? (
        <div id={field.labelId} className="text-sm font-medium text-slate-700">
          {label}
        </div>
      ) : (
        <label htmlFor={field.controlId} className="block text-sm font-medium text-slate-700">
          {label}
        </label>
      )}
      {children}
      <FieldMessages hint={hint} hintId={field.hintId} error={error} errorId={field.errorId} />
    </div>
  );
}
