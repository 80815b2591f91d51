import { type FieldErrors, type FieldValues, get, type Path, type UseFormRegister } from "react-hook-form";

/**
 * The props a form field needs from react-hook-form: what `register` returns and the field's
 * error message. Each field then names its form value once: `<TextField {...field("name")} />`.
 */
export function registeredField<Values extends FieldValues>(
  register: UseFormRegister<Values>,
  errors: FieldErrors<Values>,
) {
  return (name: Path<Values>) => ({
    ...register(name),
    error: (get(errors, name) as { message?: string } | undefined)?.message,
  });
}
