import { PDFDocument, type PDFFont, StandardFonts } from "pdf-lib";
import type { ReceiptDetails } from "./receipts.ts";

/** Who issues receipts: PLATFORM_LEGAL_NAME and PLATFORM_ADDRESS (config.ts). */
export interface ReceiptIssuer {
  legalName: string;
  address: string;
}

const KIND_TITLES: Record<ReceiptDetails["kind"], string> = {
  top_up: "Wallet top-up",
  plan_payment: "Plan payment",
  payout: "Payout",
};

const STATUS_LABELS: Record<ReceiptDetails["status"], string> = {
  paid: "Paid",
  partially_refunded: "Partially refunded",
  refunded: "Refunded",
  disputed: "Disputed",
  reversed: "Returned (payout reversed or failed)",
};

export const amountText = (receipt: Pick<ReceiptDetails, "amount_cents" | "currency">) =>
  `${(receipt.amount_cents / 100).toFixed(2)} ${receipt.currency}`;

/** The lines a receipt shows, in order, the same in HTML and PDF. */
function receiptFields(receipt: ReceiptDetails): Array<[string, string]> {
  const payerLabel = receipt.kind === "payout" ? "Paid to" : "Paid by";
  return [
    ["Receipt number", receipt.number],
    ["Date (UTC)", receipt.occurred_at.replace("T", " ").replace(/\.\d+Z$/, "")],
    ["Type", KIND_TITLES[receipt.kind]],
    ["Description", receipt.description],
    ...(receipt.seller ? ([["Sold by", receipt.seller]] as Array<[string, string]>) : []),
    [payerLabel, `${receipt.payer.name} <${receipt.payer.email}>`],
    // An organization's billing details (decision 084), when it gave them.
    ...(receipt.payer.address
      ? ([["Billing address", receipt.payer.address.split(/\r?\n/).filter(Boolean).join(", ")]] as Array<
          [string, string]
        >)
      : []),
    ...(receipt.payer.taxId ? ([["Tax ID", receipt.payer.taxId]] as Array<[string, string]>) : []),
    ["Payment method", receipt.method],
    ...(receipt.reference ? ([["Reference", receipt.reference]] as Array<[string, string]>) : []),
    ["Status", STATUS_LABELS[receipt.status]],
    ["Amount", amountText(receipt)],
  ];
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[char] ?? char,
  );

/** A printable, self-contained page: inline styles only, nothing fetched, every value escaped. */
export function receiptHtml(receipt: ReceiptDetails, issuer: ReceiptIssuer): string {
  const rows = receiptFields(receipt)
    .map(
      ([label, value]) => `<tr><th scope="row">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`,
    )
    .join("\n");
  const address = issuer.address
    .split(/\r?\n|,\s*/)
    .filter(Boolean)
    .map(escapeHtml)
    .join("<br>");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Receipt ${escapeHtml(receipt.number)}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#111827;max-width:42rem;margin:2rem auto;padding:0 1rem;line-height:1.5}
h1{font-size:1.5rem;margin:0 0 .25rem}
.issuer{color:#4b5563;margin-bottom:1.5rem}
table{width:100%;border-collapse:collapse}
th,td{text-align:left;padding:.5rem .25rem;border-bottom:1px solid #e5e7eb;vertical-align:top}
th{width:12rem;color:#4b5563;font-weight:500}
tr:last-child th,tr:last-child td{font-weight:700;font-size:1.1rem}
.status{margin-top:1rem;color:#b91c1c}
@media print{body{margin:0}}
</style>
</head>
<body>
<h1>Receipt ${escapeHtml(receipt.number)}</h1>
<div class="issuer"><strong>${escapeHtml(issuer.legalName)}</strong>${address ? `<br>${address}` : ""}</div>
<table>
${rows}
</table>
${receipt.status === "paid" ? "" : `<p class="status">This ${KIND_TITLES[receipt.kind].toLowerCase()} is ${escapeHtml(STATUS_LABELS[receipt.status].toLowerCase())}.</p>`}
</body>
</html>
`;
}

/** pdf-lib's standard fonts write WinAnsi only: anything else is shown as "?". */
const winAnsi = (text: string) => text.normalize("NFC").replace(/[^\x20-\x7e\xa0-\xff]/g, "?");

/** Splits a value into lines that fit `width` at `size` points. */
function wrap(text: string, font: PDFFont, size: number, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    const candidate = line ? `${line} ${word}` : word;
    if (font.widthOfTextAtSize(candidate, size) <= width || !line) line = candidate;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line) lines.push(line);
  // A single word wider than the column is cut, not drawn past the page's edge.
  return lines.flatMap((l) => {
    const parts: string[] = [];
    let rest = l;
    while (font.widthOfTextAtSize(rest, size) > width && rest.length > 1) {
      let cut = rest.length - 1;
      while (cut > 1 && font.widthOfTextAtSize(rest.slice(0, cut), size) > width) cut -= 1;
      parts.push(rest.slice(0, cut));
      rest = rest.slice(cut);
    }
    parts.push(rest);
    return parts;
  });
}

/** The same receipt as an A4 PDF (pdf-lib's built-in Helvetica: no font files, no browser). */
export async function receiptPdf(receipt: ReceiptDetails, issuer: ReceiptIssuer): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  pdf.setTitle(`Receipt ${receipt.number}`);
  pdf.setAuthor(winAnsi(issuer.legalName));
  pdf.setCreationDate(new Date(receipt.occurred_at));
  const page = pdf.addPage([595.28, 841.89]);
  const regular = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const left = 56;
  const valueX = 200;
  const valueWidth = 595.28 - valueX - left;
  let y = 841.89 - 72;
  page.drawText(`Receipt ${receipt.number}`, { x: left, y, size: 20, font: bold });
  y -= 28;
  page.drawText(winAnsi(issuer.legalName), { x: left, y, size: 11, font: bold });
  for (const line of issuer.address.split(/\r?\n|,\s*/).filter(Boolean)) {
    y -= 14;
    page.drawText(winAnsi(line), { x: left, y, size: 10, font: regular });
  }
  y -= 32;
  for (const [label, value] of receiptFields(receipt)) {
    const isTotal = label === "Amount";
    const size = isTotal ? 13 : 10.5;
    page.drawText(label, { x: left, y, size, font: isTotal ? bold : regular });
    for (const line of wrap(winAnsi(value), isTotal ? bold : regular, size, valueWidth)) {
      page.drawText(line, { x: valueX, y, size, font: isTotal ? bold : regular });
      y -= size + 4;
    }
    y -= 8;
  }
  return pdf.save({ useObjectStreams: false });
}
