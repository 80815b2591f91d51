import { QueryClientProvider } from "@tanstack/react-query";
import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { RuntimeConfigProvider } from "../../lib/runtime-config";
import { stubFetch } from "../../test/fetch-stub";
import { runtimeConfigFixture } from "../../test/fixtures";
import { createTestQueryClient } from "../../test/render-route";
import { TopUpCard } from "./top-up-card";

describe("top-up card on a host that takes payments through Stripe", () => {
  it("warns that Stripe is not configured and refuses to pay with 'Stripe has not loaded yet'", async () => {
    const api = stubFetch({});
    render(
      <QueryClientProvider client={createTestQueryClient()}>
        <RuntimeConfigProvider
          config={{ ...runtimeConfigFixture(), sandbox: { llm: false, payments: false } }}
        >
          <TopUpCard />
        </RuntimeConfigProvider>
      </QueryClientProvider>,
    );

    expect(
      screen.getByText("Stripe is not configured. Payment functionality is not available."),
    ).toBeDefined();
    expect(screen.queryByText("Sandbox payments — no real money moves")).toBeNull();
    await userEvent.click(screen.getByRole("button", { name: "Top up $10.00" }));

    expect(screen.getByText("Stripe has not loaded yet. Please try again.")).toBeDefined();
    expect(api.requests).toHaveLength(0);
  });
});
