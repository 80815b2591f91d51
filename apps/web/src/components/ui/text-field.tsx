import type { InputHTMLAttributes, Ref } from "react";
import { FieldFrame, useFieldDescription } from "./field-message";

export const inputClasses =
  "block h-10 w-full rounded-lg border border-slate-300 bg-white px-3 text-sm text-slate-900 shadow-sm " +
  "placeholder:text-slate-400 transition-colors " +
  "focus:border-brand-600 focus:outline-none focus:ring-2 focus:ring-brand-600/20 " +
  "disabled:cursor-not-allowed disabled:bg-slate-50 disabled:text-slate-500 " +
  "aria-invalid:border-red-500 aria-invalid:focus:ring-red-500/20";

export interface TextFieldProps extends InputHTMLAttributes<HTMLInputElement> {
  label: string;
  /** Help text under the input, linked with aria-describedby. */
  hint?: string;
  /** A validation message; marks the input invalid. */
  error?: string;
  ref?: Ref<HTMLInputElement>;
}

/** A labelled input with its help text and validation message. */
export function TextField({ label, hint, error, id, className, ref, ...inputProps }: TextFieldProps) {
  const field = useFieldDescription(id, hint, error);
  return (
    <FieldFrame field={field} label={label} hint={hint} error={error} className={className}>
      <input ref={ref} className={inputClasses} {...field.controlProps} {...inputProps} />
    </FieldFrame>
  );
}
