import { type FieldValues, get, type Path, type UseFormReturn } from "react-hook-form";

/**
 * The props a form field needs from react-hook-form: what `register` returns and the field's
 * error message. Each field then names its form value once: `<TextField {...field("name")} />`.
 */
export function registeredField<Values extends FieldValues>({
  register,
  formState,
}: Pick<UseFormReturn<Values>, "register" | "formState">) {
  return (name: Path<Values>) => ({
    ...register(name),
    error: (get(formState.errors, name) as { message?: string } | undefined)?.message,
  });
}
