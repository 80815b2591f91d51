import type { Profile } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { walletFixture, walletTransactionFixture } from "../../test/billing-fixtures";
import { jsonResponse, type RecordedRequest } from "../../test/fetch-stub";
import { profileFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";

const CONFIRM = "POST /api/billing/sandbox/confirm/";
const INTENT = "POST /api/wallet/payment-intents/";

function renderWallet() {
  return renderRoute("/wallet", { auth: createTestAuth("signed-in") });
}

/** The wallet API with a balance that top-ups raise, like the server's. */
function stubWalletApi({
  balance = 0,
  confirm = {},
  creator = null,
  held = 0,
  earnings = 0,
}: {
  balance?: number;
  confirm?: { status?: string; message?: string };
  creator?: Profile["creator"];
  held?: number;
  earnings?: number;
} = {}) {
  let wallet = walletFixture({
    balance_micros: balance * 10_000,
    held_micros: held * 10_000,
    earnings_micros: earnings * 10_000,
  });
  let amount = 0;
  return stubSignedInApi(
    {
      "GET /api/wallet/": () => jsonResponse(wallet),
      [INTENT]: ({ body }: RecordedRequest) => {
        amount = (body as { amount: number }).amount;
        return jsonResponse({
          id: "pi_1",
          client_secret: "pi_1_secret_x",
          amount,
          currency: "usd",
          gateway: "sandbox",
        });
      },
      [CONFIRM]: () => {
        const status = confirm.status ?? "succeeded";
        if (status === "succeeded") {
          wallet = {
            ...wallet,
            balance_micros: wallet.balance_micros + amount * 10_000,
            transactions: [
              walletTransactionFixture({ amount_micros: amount * 10_000 }),
              ...wallet.transactions,
            ],
          };
        }
        return jsonResponse({
          status,
          message: confirm.message ?? "Payment succeeded",
          amount,
          balance_micros: wallet.balance_micros,
        });
      },
    },
    profileFixture({ creator }),
  );
}

async function payWith(number: string) {
  await userEvent.type(screen.getByLabelText("Card number"), number);
  await userEvent.type(screen.getByLabelText("Expiry (MM/YY)"), "12/34");
  await userEvent.type(screen.getByLabelText("CVC"), "123");
}

function balances() {
  return within(screen.getByRole("region", { name: "Balances" }));
}

describe("wallet", () => {
  it("shows the balance, the held amount when there is one, and earnings to creators", async () => {
    stubWalletApi({
      balance: 1234,
      held: 50,
      earnings: 90,
      creator: { id: "c", display_name: "A", plan: "free", credits: 0 },
    });
    renderWallet();

    expect(await screen.findByRole("heading", { name: "Wallet", level: 1 })).toBeDefined();
    await screen.findByRole("region", { name: "Balances" });
    expect(balances().getByText("Balance").nextSibling?.textContent).toBe("$12.34");
    expect(balances().getByText("On hold").nextSibling?.textContent).toBe("$0.50");
    expect(balances().getByText(/Set aside for calls in progress/)).toBeDefined();
    await waitFor(() => expect(balances().getByText("Earnings").nextSibling?.textContent).toBe("$0.90"));
    expect(screen.getByText("Sandbox payments — no real money moves")).toBeDefined();
  });

  it("hides held and earnings from a consumer who has neither", async () => {
    stubWalletApi({ balance: 0 });
    renderWallet();

    await screen.findByRole("region", { name: "Balances" });
    expect(balances().getByText("Balance").nextSibling?.textContent).toBe("$0.00");
    expect(balances().queryByText("On hold")).toBeNull();
    expect(balances().queryByText("Earnings")).toBeNull();
    expect(screen.getByRole("heading", { name: "No transactions yet" })).toBeDefined();
  });

  it("tops up a preset amount: a payment intent, then the card confirms it, then the balance reloads", async () => {
    const api = stubWalletApi({ balance: 0 });
    renderWallet();

    await userEvent.click(await screen.findByRole("button", { name: "$25" }));
    expect(screen.getByRole("button", { name: "$25" }).getAttribute("aria-pressed")).toBe("true");
    await payWith("4242424242424242");
    await userEvent.click(screen.getByRole("button", { name: "Top up $25.00" }));

    expect(await screen.findByText("Added $25.00 to your wallet. New balance: $25.00.")).toBeDefined();
    await waitFor(() => expect(balances().getByText("Balance").nextSibling?.textContent).toBe("$25.00"));
    expect(api.callsTo(INTENT)[0]?.body).toEqual({ amount: 2500, currency: "usd" });
    expect(api.callsTo(CONFIRM)[0]?.body).toEqual({
      client_secret: "pi_1_secret_x",
      card: { number: "4242424242424242", exp_month: 12, exp_year: 2034, cvc: "123" },
    });
    const row = within(screen.getByRole("table")).getByText("Wallet top-up (card •••• 4242)").closest("tr");
    expect(within(row as HTMLElement).getByText("+$25.00").className).toContain("green");
  });

  it("takes a custom amount of at least $1", async () => {
    const api = stubWalletApi();
    renderWallet();

    await userEvent.type(await screen.findByLabelText("Custom amount (USD)"), "0.50");
    await payWith("4242424242424242");
    await userEvent.click(screen.getByRole("button", { name: "Top up" }));
    expect(screen.getByText("The minimum top-up is $1.00")).toBeDefined();
    expect(api.callsTo(INTENT)).toHaveLength(0);

    await userEvent.clear(screen.getByLabelText("Custom amount (USD)"));
    await userEvent.type(screen.getByLabelText("Custom amount (USD)"), "12.5");
    await userEvent.click(screen.getByRole("button", { name: "Top up $12.50" }));
    expect(await screen.findByText(/Added \$12\.50 to your wallet/)).toBeDefined();
    expect(api.callsTo(INTENT)[0]?.body).toEqual({ amount: 1250, currency: "usd" });
  });

  it("shows the decline message of a declined card and leaves the balance alone", async () => {
    stubWalletApi({ confirm: { status: "failed", message: "Your card was declined." } });
    renderWallet();

    await screen.findByRole("region", { name: "Balances" });
    await payWith("4000000000000002");
    await userEvent.click(screen.getByRole("button", { name: "Top up $10.00" }));
    expect((await screen.findByRole("alert")).textContent).toBe("Your card was declined.");
    expect(balances().getByText("Balance").nextSibling?.textContent).toBe("$0.00");
  });

  it("says 'Payment was not completed successfully' when the card needs action", async () => {
    stubWalletApi({ confirm: { status: "requires_action", message: "needs authentication" } });
    renderWallet();

    await screen.findByRole("region", { name: "Balances" });
    await payWith("4000002500003155");
    await userEvent.click(screen.getByRole("button", { name: "Top up $10.00" }));
    expect((await screen.findByRole("alert")).textContent).toBe("Payment was not completed successfully");
  });

  it("lists movements with signed, coloured amounts and their account", async () => {
    stubSignedInApi({
      "GET /api/wallet/": () =>
        jsonResponse(
          walletFixture({
            transactions: [
              walletTransactionFixture({
                id: "t1",
                kind: "settle",
                amount_micros: -500_000,
                description: "Call to tea-writer",
              }),
              walletTransactionFixture({
                id: "t2",
                kind: "earning",
                amount_micros: 450_000,
                account: "earnings",
                description: "Earning from tea-writer",
              }),
            ],
          }),
        ),
    });
    renderWallet();

    const table = within(await screen.findByRole("table"));
    const call = within(table.getByText("Call to tea-writer").closest("tr") as HTMLElement);
    expect(call.getByText("-$0.50").className).toContain("red");
    expect(call.getAllByText("Wallet").length).toBeGreaterThan(0);
    const earning = within(table.getByText("Earning from tea-writer").closest("tr") as HTMLElement);
    expect(earning.getByText("+$0.45").className).toContain("green");
    expect(earning.getAllByText("Earnings").length).toBeGreaterThan(0);
    expect(table.getByRole("columnheader", { name: "Date" })).toBeDefined();
  });

  it("shows an error box when the wallet fails to load", async () => {
    stubSignedInApi({ "GET /api/wallet/": () => jsonResponse({ message: "down" }, 500) });
    renderWallet();

    expect((await screen.findByRole("alert")).textContent).toContain("Failed to load wallet");
  });
});
