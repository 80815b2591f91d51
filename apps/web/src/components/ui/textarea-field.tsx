import type { Ref, TextareaHTMLAttributes } from "react";
import { cn } from "../../lib/cn";
import { FieldFrame, useFieldDescription } from "./field-message";
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
  const field = useFieldDescription(id, hint, error);
  return (
    <FieldFrame field={field} label={label} hint={hint} error={error} className={className}>
      <textarea
        ref={ref}
        rows={rows}
        className={cn(inputClasses, "h-auto py-2 leading-relaxed")}
        {...field.controlProps}
        {...rest}
      />
    </FieldFrame>
  );
}
