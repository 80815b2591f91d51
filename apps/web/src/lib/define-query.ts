import { type QueryKey, queryOptions, type UseQueryOptions, useQuery } from "@tanstack/react-query";

/** What an endpoint may set besides its key and fetcher (retry, staleTime, refetchInterval…). */
type QuerySettings<Result, Key extends QueryKey> = Omit<
  UseQueryOptions<Result, Error, Result, Key>,
  "queryKey" | "queryFn"
>;

/**
 * One read endpoint as the app uses it: its cache key and its fetcher give the query options
 * (for useQueries and for composing queries) and the hook the pages call, so each `api/` file
 * says only which endpoint and which key. Mutations invalidate by the same key.
 */
export function defineQuery<Args extends unknown[], Key extends QueryKey, Result>(
  definition: {
    key: (...args: Args) => Key;
    fetch: (...params: [...Args, AbortSignal]) => Promise<Result>;
  } & QuerySettings<Result, Key>,
) {
  const { key, fetch, ...settings } = definition;
  function options(...args: Args) {
    return queryOptions<Result, Error, Result, Key>({
      ...settings,
      queryKey: key(...args),
      queryFn: ({ signal }) => fetch(...args, signal),
    });
  }
  function useDefinedQuery(...args: Args) {
    return useQuery(options(...args));
  }
  return { options, useQuery: useDefinedQuery };
}
