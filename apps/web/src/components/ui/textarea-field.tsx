import type { Ref, TextareaHTMLAttributes } from "react";
import { cn } from "../../lib/cn";
import { FieldMessages, useFieldDescription } from "./field-message";
import { inputClasses } from "./text-field";

export interface TextareaFieldProps extends TextareaHTMLAttributes<HTMLTextAreaElement> {
  label: string;
  hint?: string;
  error?: string;
  ref?: Ref<HTMLTextAreaElement>;
}

export function TextareaField({
  label,
  hint,
  error,
  id,
  className,
  ref,
  rows = 3,
  ...rest
}: TextareaFieldProps) {
  const { controlId, hintId, errorId, controlProps } = useFieldDescription(id, hint, error);
  return (
    <div className={cn("space-y-1.5", className)}>
      <label htmlFor={controlId} className="block text-sm font-medium text-slate-700">
        {label}
      </label>
      <textarea
        ref={ref}
        rows={rows}
        className={cn(inputClasses, "h-auto py-2 leading-relaxed")}
        {...controlProps}
        {...rest}
      />
      <FieldMessages hint={hint} hintId={hintId} error={error} errorId={errorId} />
    </div>
  );
}
