import { Download, ExternalLink } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { getErrorMessage } from "../../lib/api-client";
import { downloadReceiptPdf, openReceiptHtml } from "../../lib/receipts";
import { Button } from "./button";

/** A receipt's two actions: open its printable page, download its PDF (each busy while it loads). */
export function ReceiptLinks({ number }: { number: string }) {
  const [busy, setBusy] = useState<"html" | "pdf" | null>(null);
  const run = async (kind: "html" | "pdf") => {
    setBusy(kind);
    try {
      await (kind === "html" ? openReceiptHtml(number) : downloadReceiptPdf(number));
    } catch (error) {
      toast.error(
        `Could not ${kind === "html" ? "open" : "download"} receipt ${number}: ${getErrorMessage(error)}`,
      );
    } finally {
      setBusy(null);
    }
  };
  return (
    <div className="flex flex-wrap justify-end gap-2">
      <Button
        variant="secondary"
        size="sm"
        busy={busy === "html"}
        aria-label={`Open receipt ${number}`}
        onClick={() => void run("html")}
      >
        {busy !== "html" && <ExternalLink className="size-4" aria-hidden="true" />}
        Open
      </Button>
      <Button
        variant="secondary"
        size="sm"
        busy={busy === "pdf"}
        aria-label={`Download receipt ${number} (PDF)`}
        onClick={() => void run("pdf")}
      >
        {busy !== "pdf" && <Download className="size-4" aria-hidden="true" />}
        PDF
      </Button>
    </div>
  );
}
