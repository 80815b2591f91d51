import { TextField, type TextFieldProps } from "./text-field";

export interface NumberLimits {
  min: number;
  max: number;
  step: number;
}

/**
 * A number input that carries its limits as attributes (so the browser's arrows and phone
 * keyboards follow them): whole-number steps get the digit keyboard, the others the decimal one.
 */
export function NumberField({
  min,
  max,
  step,
  ...fieldProps
}: Omit<TextFieldProps, "type" | "inputMode" | "min" | "max" | "step"> & NumberLimits) {
  const whole = Number.isInteger(step) && Number.isInteger(min) && min >= 0;
  return (
    <TextField
      type="number"
      inputMode={whole ? "numeric" : "decimal"}
      min={min}
      max={max}
      step={step}
      {...fieldProps}
    />
  );
}

/** The message for a typed number outside its limits, or undefined when it is within them. */
export function rangeProblem(text: string, { min, max }: NumberLimits, integer = false): string | undefined {
  const value = Number(text);
  if (text.trim() === "" || !Number.isFinite(value) || value < min || value > max) {
    return `Must be between ${min} and ${max}`;
  }
  if (integer && !Number.isInteger(value)) return "Must be a whole number";
  return undefined;
}
