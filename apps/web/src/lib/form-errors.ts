/**
 * The errors still true once the `changed` fields have new values. An error is about the value it
 * was shown for: once the person edits that field it goes, instead of staying until the next save.
 */
export function withoutErrorsFor<F extends string>(
  errors: Partial<Record<F, string>>,
  changed: readonly string[],
): Partial<Record<F, string>> {
  if (!changed.some((field) => field in errors)) return errors;
  return Object.fromEntries(Object.entries(errors).filter(([field]) => !changed.includes(field))) as Partial<
    Record<F, string>
  >;
}
