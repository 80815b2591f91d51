import { screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { renderRoute } from "../../test/render-route";

function renderSuccess(search: string) {
  stubSignedInApi();
  return renderRoute(`/billing/success${search}`, { auth: createTestAuth("signed-in") });
}

describe("payment return page", () => {
  it("confirms a succeeded payment and leads back to the page it came from", async () => {
    renderSuccess(
      "?payment_intent=pi_123&redirect_status=succeeded&return_to=%2Fapplications%2Fmy-app%2Fbilling",
    );

    expect(await screen.findByRole("heading", { name: "Payment Complete", level: 1 })).toBeDefined();
    expect(screen.getByRole("status").textContent).toBe("Your payment was successful.");
    expect(screen.getByText("pi_123")).toBeDefined();
    expect(screen.getByRole("link", { name: "Continue" }).getAttribute("href")).toBe(
      "/applications/my-app/billing",
    );
  });

  it.each(["?redirect_status=failed", "?payment_intent=pi_9&redirect_status=requires_action"])(
    "says 'Payment was not completed successfully' for %j",
    async (search) => {
      renderSuccess(search);

      expect((await screen.findByRole("alert")).textContent).toBe("Payment was not completed successfully");
      expect(screen.getByRole("link", { name: "Go to Wallet" }).getAttribute("href")).toBe("/wallet");
    },
  );

  it("opened without a payment's result, says there is nothing to confirm and leads to the wallet", async () => {
    renderSuccess("");

    expect(await screen.findByRole("heading", { name: "Nothing to confirm here" })).toBeDefined();
    expect(screen.queryByRole("alert")).toBeNull();
    expect(screen.queryByText(/Payment was not completed/)).toBeNull();
    expect(screen.getByRole("link", { name: "Go to Wallet" }).getAttribute("href")).toBe("/wallet");
    expect(screen.getByRole("link", { name: "Go to Dashboard" }).getAttribute("href")).toBe("/dashboard");
  });

  it.each(["https://evil.example/steal", "//evil.example", "/\\evil.example", "javascript:alert(1)"])(
    "never returns to %s, only to a path on this site",
    async (returnTo) => {
      renderSuccess(`?redirect_status=succeeded&return_to=${encodeURIComponent(returnTo)}`);

      expect((await screen.findByRole("link", { name: "Go to Wallet" })).getAttribute("href")).toBe(
        "/wallet",
      );
    },
  );
});
