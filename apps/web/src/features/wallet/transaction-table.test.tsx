import type { WalletTransaction } from "@promptmint/contracts";
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { TRANSACTION_PAGE_SIZE, TransactionTable } from "./transaction-table";

const rows = (n: number): WalletTransaction[] =>
  Array.from({ length: n }, (_, i) => ({
    id: String(i),
    kind: "earning",
    amount_micros: 450_000,
    account: "earnings",
    description: `Paid call ${i + 1}`,
    created_at: "2026-11-22T10:00:00.000Z",
  }));

describe("TransactionTable", () => {
  it("shows the first page and reveals more on request", async () => {
    render(<TransactionTable transactions={rows(40)} />);
    const table = screen.getByRole("table", { name: "Transaction history" });
    expect(within(table).getAllByRole("row")).toHaveLength(TRANSACTION_PAGE_SIZE + 1);
    expect(screen.getByText(`Showing ${TRANSACTION_PAGE_SIZE} of 40`)).toBeTruthy();
    await userEvent.click(screen.getByRole("button", { name: "Show more" }));
    expect(within(table).getAllByRole("row")).toHaveLength(2 * TRANSACTION_PAGE_SIZE + 1);
    await userEvent.click(screen.getByRole("button", { name: "Show more" }));
    expect(within(table).getAllByRole("row")).toHaveLength(41);
    expect(screen.queryByRole("button", { name: "Show more" })).toBeNull();
  });

  it("needs no button when everything fits", () => {
    render(<TransactionTable transactions={rows(3)} />);
    expect(screen.queryByRole("button", { name: "Show more" })).toBeNull();
    expect(screen.getByText("Paid call 3")).toBeTruthy();
  });
});
