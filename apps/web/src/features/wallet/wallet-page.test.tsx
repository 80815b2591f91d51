import type { PaymentMethod, Profile, Wallet, WalletStatement } from "@promptmint/contracts";
import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { createQueryClient } from "../../app/query-client";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { paymentMethodFixture, walletFixture, walletTransactionFixture } from "../../test/billing-fixtures";
import { jsonResponse, type RecordedRequest } from "../../test/fetch-stub";
import { applicationFixture, moneyFiguresFixture, profileFixture } from "../../test/fixtures";
import { fillPaymentCard } from "../../test/payment-card";
import { renderRoute } from "../../test/render-route";

const CONFIRM = "POST /api/billing/sandbox/confirm/";
const INTENT = "POST /api/wallet/payment-intents/";
const STATEMENT = "GET /api/wallet/statement/?limit=25";
const FIGURES = "GET /api/analytics/figures/?days=30";

/** The statement of a wallet's own movements, as the server builds it (one page). */
function statementOf(wallet: Wallet): WalletStatement {
  return {
    lines: wallet.transactions
      .filter((transaction) => transaction.account === "wallet")
      .map((transaction) => ({
        id: `entry:${transaction.id}`,
        kind: transaction.kind,
        description: transaction.description,
        application: null,
        calls: null,
        day: null,
        amount_micros: transaction.amount_micros,
        created_at: transaction.created_at,
      })),
    next_cursor: null,
  };
}

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
  savedCards = [],
}: {
  savedCards?: PaymentMethod[];
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
  const api = stubSignedInApi(
    {
      "GET /api/wallet/": () => jsonResponse(wallet),
      "GET /api/wallet/payment-methods/": () => jsonResponse(savedCards),
      // Trials and promotional credit (credits-card.test.tsx tests them).
      "GET /api/wallet/credits/": () => jsonResponse({ data: [] }),
      // The receipts and the usage export's keys (wallet/receipts-card.test.tsx tests them).
      "GET /api/receipts/": () => jsonResponse({ receipts: [] }),
      "GET /api/keys/": () => jsonResponse([]),
      // A creator here sells an app: the earnings figures are for sellers (issue 32).
      "GET /api/app/": () => jsonResponse(creator ? [applicationFixture()] : []),
      [STATEMENT]: () => jsonResponse(statementOf(wallet)),
      [FIGURES]: () =>
        jsonResponse(
          moneyFiguresFixture({ gross_micros: 1_000_000, fee_micros: 100_000, model_cost_micros: 5_000 }),
        ),
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
  /** The balance changed on the server by something other than this screen. */
  const setBalance = (cents: number) => {
    wallet = { ...wallet, balance_micros: cents * 10_000 };
  };
  return { ...api, setBalance };
}

function payWith(number: string) {
  return fillPaymentCard(document.body, { number });
}

/** A wallet of $0.00 whose card confirmation answers `confirm`: the $10.00 top-up is paid with `card`. */
async function topUpTenDollars(card: string, confirm: { status?: string; message?: string }) {
  stubWalletApi({ confirm });
  renderWallet();
  await screen.findByRole("region", { name: "Balances" });
  await payWith(card);
  await userEvent.click(screen.getByRole("button", { name: "Top up $10.00" }));
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
    // The creator's figures of the last 30 days, side by side, a sub-cent model cost not read as zero.
    const figures = within(await screen.findByLabelText("Earnings, Last 30 days"));
    await waitFor(() => expect(figures.getByText("Gross").nextSibling?.textContent).toBe("$1.00"));
    expect(figures.getByText("Platform fee").nextSibling?.textContent).toBe("-$0.10");
    expect(figures.getByText("Model cost").nextSibling?.textContent).toBe("-$0.01");
    expect(figures.getByTitle("Exactly -$0.005").textContent).toBe("-$0.01");
    expect(figures.getByText("Net").nextSibling?.textContent).toBe("$0.90");
    expect(figures.getByTitle("Exactly $0.895")).toBeDefined();
  });

  it("shows no earnings to a creator record without apps (everyone who signs up has one)", async () => {
    stubSignedInApi(
      {
        "GET /api/wallet/": () => jsonResponse(walletFixture({ balance_micros: 5_000_000 })),
        "GET /api/app/": () => jsonResponse([]),
        [STATEMENT]: () => jsonResponse({ lines: [], next_cursor: null }),
      },
      profileFixture({ creator: { id: "c", display_name: "A", plan: "free", credits: 0 } }),
    );
    renderWallet();

    await screen.findByRole("region", { name: "Balances" });
    expect(balances().getByText("Balance").nextSibling?.textContent).toBe("$5.00");
    expect(balances().queryByText("Earnings")).toBeNull();
    expect(screen.queryByLabelText("Earnings, Last 30 days")).toBeNull();
  });

  it("hides held and earnings from a consumer who has neither", async () => {
    stubWalletApi({ balance: 0 });
    renderWallet();

    await screen.findByRole("region", { name: "Balances" });
    expect(balances().getByText("Balance").nextSibling?.textContent).toBe("$0.00");
    expect(balances().queryByText("On hold")).toBeNull();
    expect(balances().queryByText("Earnings")).toBeNull();
    expect(await screen.findByRole("heading", { name: "Nothing yet" })).toBeDefined();
    // Nor a creator's figures or earnings history.
    expect(screen.queryByLabelText("Earnings, Last 30 days")).toBeNull();
    expect(screen.queryByRole("heading", { name: "Earnings History" })).toBeNull();
  });

  it("tops up a preset amount: a payment intent, then the card confirms it, then the balance and receipts reload", async () => {
    const api = stubWalletApi({ balance: 0 });
    renderWallet();

    await userEvent.click(await screen.findByRole("button", { name: "$25" }));
    expect(api.callsTo("GET /api/receipts/")).toHaveLength(1);
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
    const row = within(await screen.findByRole("table", { name: "Statement" }))
      .getByText("Wallet top-up (card •••• 4242)")
      .closest("tr");
    expect(within(row as HTMLElement).getByText("+$25.00").className).toContain("green");
    // The top-up's receipt is listed without a reload.
    await waitFor(() => expect(api.callsTo("GET /api/receipts/")).toHaveLength(2));
  });

  it("tops up with a card saved earlier, offered first so it is not typed again", async () => {
    const api = stubWalletApi({ savedCards: [paymentMethodFixture({ id: "pm-1", card_last4: "4242" })] });
    renderWallet();

    const saved = await screen.findByRole("radio", { name: "Visa •••• 4242" });
    expect((saved as HTMLInputElement).checked).toBe(true);
    expect(screen.queryByLabelText("Card number")).toBeNull();
    await userEvent.click(screen.getByRole("button", { name: "Top up $10.00" }));

    expect(await screen.findByText(/Added \$10\.00 to your wallet/)).toBeDefined();
    expect(api.callsTo(CONFIRM)[0]?.body).toEqual({
      client_secret: "pi_1_secret_x",
      payment_method_id: "pm-1",
    });
    // A new card is still one click away.
    await userEvent.click(screen.getByRole("radio", { name: "Use a new card" }));
    expect(screen.getByLabelText("Card number")).toBeDefined();
  });

  it("tops up with Apple Pay or Google Pay on the sandbox (SPEC §5), with no card typed", async () => {
    const api = stubWalletApi();
    renderWallet();

    await userEvent.click(await screen.findByRole("radio", { name: "Google Pay" }));
    expect(screen.queryByLabelText("Card number")).toBeNull();
    await userEvent.click(screen.getByRole("radio", { name: "Apple Pay" }));
    await userEvent.click(screen.getByRole("button", { name: "Pay $10.00 with Apple Pay" }));

    expect(await screen.findByText(/Added \$10\.00 to your wallet/)).toBeDefined();
    expect(api.callsTo(CONFIRM)[0]?.body).toEqual({ client_secret: "pi_1_secret_x", wallet: "apple_pay" });
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

  it("reads the balance afresh when the wallet is visited again in the app, despite the app's 30 s freshness", async () => {
    const api = stubWalletApi({ balance: 500 });
    const { router } = renderRoute("/wallet", {
      auth: createTestAuth("signed-in"),
      queryClient: createQueryClient(),
    });
    await waitFor(() => expect(balances().getByText("Balance").nextSibling?.textContent).toBe("$5.00"));

    await act(() => router.navigate("/profile"));
    // Meanwhile a call with an API key is paid from the wallet, which this tab does not see.
    api.setBalance(420);
    await act(() => router.navigate("/wallet"));

    await waitFor(() => expect(balances().getByText("Balance").nextSibling?.textContent).toBe("$4.20"));
    // The wallet, the profile's balance, the wallet again: each visit reads it afresh.
    expect(api.callsTo("GET /api/wallet/")).toHaveLength(3);
  });

  it("says 'Payment was not completed successfully' with the decline as detail, and leaves the balance alone", async () => {
    await topUpTenDollars("4000000000000002", { status: "failed", message: "Your card was declined." });
    const alert = await screen.findByRole("alert");
    expect(within(alert).getByText("Payment was not completed successfully").tagName).toBe("P");
    expect(within(alert).getByText("Your card was declined.")).toBeDefined();
    expect(balances().getByText("Balance").nextSibling?.textContent).toBe("$0.00");
  });

  it("says 'Payment was not completed successfully' when the card needs action", async () => {
    await topUpTenDollars("4000002500003155", { status: "requires_action", message: "needs authentication" });
    expect((await screen.findByRole("alert")).textContent).toBe("Payment was not completed successfully");
  });

  it("shows the statement: a line per app and day for paid calls, signed and coloured, and more on demand", async () => {
    const line = (overrides: Partial<WalletStatement["lines"][number]>) => ({
      id: "entry:1",
      kind: "top_up",
      description: "Wallet top-up (card •••• 4242)",
      application: null,
      calls: null,
      day: null,
      amount_micros: 10_000_000,
      created_at: "2024-05-02T10:00:00.000Z",
      ...overrides,
    });
    const api = stubSignedInApi({
      "GET /api/wallet/": () => jsonResponse(walletFixture()),
      [STATEMENT]: () =>
        jsonResponse({
          lines: [
            line({
              id: "calls:a:2024-05-03",
              kind: "calls",
              description: "Haiku Writer — 12 calls",
              application: { slug: "haiku-writer", name: "Haiku Writer" },
              calls: 12,
              day: "2024-05-03",
              amount_micros: -600_000,
              created_at: "2024-05-03T18:00:00.000Z",
            }),
          ],
          next_cursor: "older",
        }),
      "GET /api/wallet/statement/?limit=25&cursor=older": () =>
        jsonResponse({ lines: [line({})], next_cursor: null }),
    });
    renderWallet();

    const table = within(await screen.findByRole("table", { name: "Statement" }));
    const calls = within(table.getByText("Haiku Writer — 12 calls").closest("tr") as HTMLElement);
    expect(calls.getByText("-$0.60").className).toContain("red");
    expect(calls.getAllByText(/UTC day/).length).toBeGreaterThan(0);
    expect(table.queryByText(/held|released/i)).toBeNull();
    await userEvent.click(screen.getByRole("button", { name: "Show older" }));
    const topUp = await table.findByText("Wallet top-up (card •••• 4242)");
    expect(within(topUp.closest("tr") as HTMLElement).getByText("+$10.00").className).toContain("green");
    expect(screen.queryByRole("button", { name: "Show older" })).toBeNull();
    expect(api.callsTo("GET /api/wallet/statement/?limit=25&cursor=older")).toHaveLength(1);
  });

  it("shows a creator's earnings one line per day, apart from the statement, older days on request", async () => {
    const day = (date: string, description: string, micros: number, extra: object = {}) => ({
      id: `${date}:calls`,
      kind: "calls",
      day: date,
      description,
      calls: 1,
      x402_calls: 0,
      amount_micros: micros,
      created_at: `${date}T18:00:00.000Z`,
      ...extra,
    });
    const api = stubSignedInApi(
      {
        "GET /api/wallet/": () => jsonResponse(walletFixture({ earnings_micros: 450_000 })),
        [STATEMENT]: () => jsonResponse({ lines: [], next_cursor: null }),
        [FIGURES]: () => jsonResponse(moneyFiguresFixture({ gross_micros: 500_000 })),
        "GET /api/app/": () => jsonResponse([applicationFixture()]),
        "GET /api/wallet/earnings/?days=30": () =>
          jsonResponse({
            lines: [
              day("2024-05-03", "Earned from 37 paid calls (12 paid by x402)", 333_045, {
                calls: 37,
                x402_calls: 12,
              }),
            ],
            next_cursor: "2024-05-03",
          }),
        "GET /api/wallet/earnings/?days=30&cursor=2024-05-03": () =>
          jsonResponse({ lines: [day("2024-05-02", "Earned from 1 paid call", 9_000)], next_cursor: null }),
      },
      profileFixture({ creator: { id: "c", display_name: "A", plan: "free", credits: 0 } }),
    );
    renderWallet();

    const earnings = within(await screen.findByRole("table", { name: "Earnings history" }));
    const row = within(
      earnings.getByText("Earned from 37 paid calls (12 paid by x402)").closest("tr") as HTMLElement,
    );
    // Two decimals, the exact figure on hover.
    const amount = row.getByText("+$0.33");
    expect(amount.className).toContain("green");
    expect(amount.closest("[title]")?.getAttribute("title")).toContain("0.333045");
    expect(row.getAllByText(/UTC day/).length).toBeGreaterThan(0);
    await userEvent.click(screen.getByRole("button", { name: "Show older days" }));
    expect(await earnings.findByText("Earned from 1 paid call")).toBeDefined();
    expect(screen.queryByRole("button", { name: "Show older days" })).toBeNull();
    expect(api.callsTo("GET /api/wallet/earnings/?days=30&cursor=2024-05-03")).toHaveLength(1);
    const figures = within(await screen.findByLabelText("Earnings, Last 30 days"));
    await waitFor(() => expect(figures.getByText("Net").nextSibling?.textContent).toBe("$0.45"));
  });

  it("shows an error box when the wallet fails to load", async () => {
    stubSignedInApi({ "GET /api/wallet/": () => jsonResponse({ message: "down" }, 500) });
    renderWallet();

    expect((await screen.findByRole("alert")).textContent).toContain("Failed to load wallet");
  });
});
