import { type QueryKey, useMutation, useQueryClient } from "@tanstack/react-query";

/**
 * A mutation that, once it succeeds, refetches what it changed: the queries cached under
 * `queryKey`. It settles after the refetch is asked for, so a caller's onSuccess sees fresh lists.
 */
export function useInvalidatingMutation<Variables, Result>(
  mutationFn: (variables: Variables) => Promise<Result>,
  queryKey: QueryKey,
) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn,
    onSuccess: () => queryClient.invalidateQueries({ queryKey }),
  });
}
