import type { ReactNode } from "react";
import { getErrorMessage } from "../../lib/api-client";
import { ErrorBox } from "./error-box";
import { LoadingState } from "./spinner";

/**
 * A query's three states in one place: its loading line while it runs, the error box when it
 * failed (or answered nothing), and what it loaded.
 */
export function QueryStates<Data>({
  query,
  loading,
  error,
  children,
}: {
  query: { isPending: boolean; isError: boolean; error: unknown; data: Data | undefined };
  loading: string;
  /** What the box says; the server's message when not given. */
  error?: string;
  children: (data: Data) => ReactNode;
}) {
  if (query.isPending) return <LoadingState label={loading} />;
  if (query.isError || query.data === undefined)
    return <ErrorBox message={error ?? getErrorMessage(query.error)} />;
  return children(query.data);
}
