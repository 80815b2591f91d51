import type { Ref, SelectHTMLAttributes } from "react";
import { cn } from "../../lib/cn";
import { FieldFrame, useFieldDescription } from "./field-message";
import { inputClasses } from "./text-field";

export interface SelectOption {
  value: string;
  label: string;
}

export interface SelectFieldProps extends SelectHTMLAttributes<HTMLSelectElement> {
  label: string;
  options: readonly SelectOption[];
  hint?: string;
  error?: string;
  ref?: Ref<HTMLSelectElement>;
}

/** A labelled native select (keyboard and screen-reader friendly everywhere, phones included). */
export function SelectField({ label, options, hint, error, id, className, ref, ...rest }: SelectFieldProps) {
  const field = useFieldDescription(id, hint, error);
  return (
    <FieldFrame field={field} label={label} hint={hint} error={error} className={className}>
      <select ref={ref} className={cn(inputClasses, "pr-8")} {...field.controlProps} {...rest}>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </FieldFrame>
  );
}
