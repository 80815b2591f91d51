import { useEffect, useState } from "react";

/**
 * The value once it has been still for `ms` (typing a template or a slug does not send a
 * request per key). Compared by its JSON form, so a new object with the same content is still.
 */
export function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  const key = JSON.stringify(value);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the serialized key is the dependency
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [key, ms]);
  return settled;
}
