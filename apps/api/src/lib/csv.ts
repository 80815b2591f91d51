/**
 * One CSV cell (RFC 4180) that a spreadsheet cannot run: a cell starting with = + - @ (or a tab or
 * CR) is written with a leading apostrophe, except a number such as -1.50; quotes, commas and line
 * breaks are quoted. Every CSV the API writes uses it (payouts' earnings, the usage export).
 */
export function csvField(value: string | number | null): string {
  const text = value === null ? "" : String(value);
  const safe = /^[=+\-@\t\r]/.test(text) && !/^-?\d+(\.\d+)?$/.test(text) ? `'${text}` : text;
  return /[",\n\r]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** A row of cells and its CRLF. */
export const csvRow = (cells: Array<string | number | null>) => `${cells.map(csvField).join(",")}\r\n`;
