import { useMutation } from "@tanstack/react-query";
import { apiDownload } from "../../../lib/api-client";

/** `GET /payouts/statement.csv`: the creator's earnings statement as a file. */
export function downloadEarningsStatement() {
  return apiDownload("/payouts/statement.csv");
}

export function useDownloadEarningsStatement() {
  return useMutation({ mutationFn: downloadEarningsStatement });
}
