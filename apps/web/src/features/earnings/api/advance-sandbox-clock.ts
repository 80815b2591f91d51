import { SandboxClockSchema } from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { z } from "zod";
import { apiRequest } from "../../../lib/api-client";
import { earningsQueryKey } from "./get-earnings";

/** `POST /payouts/sandbox/clock`: moves the creator's own sandbox payout time ahead by `days` (1 to 30). */
export function advanceSandboxClock(days: number): Promise<z.infer<typeof SandboxClockSchema>> {
  return apiRequest("/payouts/sandbox/clock", {
    method: "POST",
    body: { advance_days: days },
    schema: SandboxClockSchema,
  });
}

/** What can be paid out depends on the clock: the summary is read again. */
export function useAdvanceSandboxClock() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: advanceSandboxClock,
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: earningsQueryKey }),
  });
}
