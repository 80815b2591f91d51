import { ReceiptListSchema } from "@promptmint/contracts";
import { useQuery } from "@tanstack/react-query";
import { apiDownload, apiRequest } from "./api-client";
import { defineQuery } from "./define-query";
import { saveBlob } from "./download-app";

// Receipts are read by the wallet (top-ups, plan payments) and by earnings (payouts), so their
// fetcher, cache key and downloads live here, like the wallet's (docs/decisions/069).

export const receiptsQueryKey = ["receipts"] as const;

/** `GET /receipts/`: the caller's receipts, newest first. */
const receipts = defineQuery({
  key: () => receiptsQueryKey,
  fetch: (signal) => apiRequest("/receipts/", { schema: ReceiptListSchema, signal }),
  // A payment or a payout moves elsewhere (a webhook, the schedule): read afresh on each visit.
  staleTime: 0,
});

export function useReceipts(options: { enabled?: boolean } = {}) {
  return useQuery({ ...receipts.options(), enabled: options.enabled ?? true });
}

/** Downloads a receipt's PDF with the caller's token and saves it as the server names it. */
export async function downloadReceiptPdf(number: string): Promise<void> {
  const { blob, fileName } = await apiDownload(`/receipts/${encodeURIComponent(number)}/pdf`);
  saveBlob(blob, fileName ?? `receipt-${number}.pdf`);
}

/**
 * Opens a receipt's printable page in a new tab. The API wants a bearer token, which a link
 * cannot carry: the page is fetched, then shown from a blob URL (it has no script and fetches nothing).
 */
export async function openReceiptHtml(number: string): Promise<void> {
  const { blob } = await apiDownload(`/receipts/${encodeURIComponent(number)}/html`);
  const url = URL.createObjectURL(new Blob([blob], { type: "text/html" }));
  window.open(url, "_blank", "noopener");
  window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** `GET /usage/export.csv?from&to[&key][&app]`: the caller's charged calls, saved as a file. */
export async function downloadUsageCsv(query: {
  from: string;
  to: string;
  key?: string;
  app?: string;
}): Promise<void> {
  const params = new URLSearchParams({ from: query.from, to: query.to });
  if (query.key) params.set("key", query.key);
  if (query.app) params.set("app", query.app);
  const { blob, fileName } = await apiDownload(`/usage/export.csv?${params.toString()}`);
  saveBlob(blob, fileName ?? `usage-${query.from}-to-${query.to}.csv`);
}
