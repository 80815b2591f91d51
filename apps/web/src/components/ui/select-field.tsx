import type { Ref, SelectHTMLAttributes } from "react";
import { cn } from "../../lib/cn";
import { FieldMessages, useFieldDescription } from "./field-message";
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
  const { controlId, hintId, errorId, controlProps } = useFieldDescription(id, hint, error);
  return (
    <div className={cn("space-y-1.5", className)}>
      <label htmlFor={controlId} className="block text-sm font-medium text-slate-700">
        {label}
      </label>
      <select ref={ref} className={cn(inputClasses, "pr-8")} {...controlProps} {...rest}>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
      <FieldMessages hint={hint} hintId={hintId} error={error} errorId={errorId} />
    </div>
  );
}
