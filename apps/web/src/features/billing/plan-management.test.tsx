import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { APP, renderBillingPage } from "../../test/billing-api";
import { packageFixture } from "../../test/billing-fixtures";
import { jsonResponse } from "../../test/fetch-stub";

describe("plan management", () => {
  it("is shown only to the application's owner", async () => {
    const { api, queryClient } = renderBillingPage({ packages: [packageFixture()] });

    expect(await screen.findByRole("heading", { name: "Available Plans" })).toBeDefined();
    // Not the owner's: their list of apps says so, and the app itself is never asked for (issue 42).
    expect(api.callsTo(`GET ${APP}/`)).toHaveLength(0);
    await waitFor(() => expect(queryClient.isFetching()).toBe(0));
    expect(screen.queryByRole("heading", { name: "Plans" })).toBeNull();
    expect(screen.queryByRole("button", { name: "Create Plan" })).toBeNull();
  });

  it("tells the owner nothing that contradicts 'your own calls are free'", async () => {
    renderBillingPage({ owner: true, packages: [] });

    expect(await screen.findByText(/Your own calls to this application are free/)).toBeDefined();
    expect(screen.getByText("No plans yet: callers pay per call from their wallets.")).toBeDefined();
    expect(screen.queryByText(/paid (per call )?from your wallet/)).toBeNull();
    expect(screen.queryByRole("heading", { name: "Current Subscriptions" })).toBeNull();
  });

  it("creates a plan from dollars, included calls and 'key: value' feature lines", async () => {
    const { api } = renderBillingPage({
      owner: true,
      extra: {
        [`POST ${APP}/packages/`]: ({ body }) => {
          api.state.packages = [packageFixture({ ...(body as object), id: "plan-new", price_cents: 550 })];
          return jsonResponse(api.state.packages[0], 201);
        },
      },
    });

    await userEvent.click(await screen.findByRole("button", { name: "Create Plan" }));
    const dialog = within(await screen.findByRole("dialog", { name: "Create Plan" }));
    await userEvent.click(dialog.getByRole("button", { name: "Create Plan" }));
    expect(dialog.getByText("Name is required")).toBeDefined();
    expect(dialog.getByText("Price is required")).toBeDefined();

    await userEvent.type(dialog.getByLabelText("Plan name"), "Pro");
    await userEvent.type(dialog.getByLabelText("Price (USD per period)"), "5.50");
    await userEvent.type(dialog.getByLabelText("Included calls"), "2");
    await userEvent.type(dialog.getByLabelText("Description"), "Two calls a month.");
    await userEvent.type(dialog.getByLabelText("Features"), "Support: Email{enter}{enter}SLA: 99.9%");
    await userEvent.click(dialog.getByRole("button", { name: "Create Plan" }));

    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    expect(api.callsTo(`POST ${APP}/packages/`)[0]?.body).toEqual({
      name: "Pro",
      price_cents: 550,
      currency: "usd",
      description: "Two calls a month.",
      features: { Support: "Email", SLA: "99.9%" },
      included_calls: 2,
      is_active: true,
    });
    const mine = within(await screen.findByRole("list", { name: "Your plans" }));
    expect(mine.getByText("$5.50/usd · 2 included calls")).toBeDefined();
  });

  it("shows the server's price refusal once, under the price, in place of its hint", async () => {
    const refusal = "At least 1,200 cents ($12.00) for 500 included calls covers their worst case.";
    renderBillingPage({
      owner: true,
      extra: {
        [`POST ${APP}/packages/`]: () =>
          jsonResponse({ code: "bad_request", message: refusal, fields: { price_cents: refusal } }, 400),
      },
    });

    await userEvent.click(await screen.findByRole("button", { name: "Create Plan" }));
    const dialog = within(await screen.findByRole("dialog"));
    await userEvent.type(dialog.getByLabelText("Plan name"), "Pro");
    await userEvent.type(dialog.getByLabelText("Price (USD per period)"), "9");
    await userEvent.type(dialog.getByLabelText("Included calls"), "500");
    await userEvent.click(dialog.getByRole("button", { name: "Create Plan" }));

    expect(await dialog.findAllByText(refusal)).toHaveLength(1);
    expect(dialog.queryByText("Failed to save plan")).toBeNull();
    expect(dialog.queryByText("At least $1.00")).toBeNull();
    expect(dialog.getByLabelText("Price (USD per period)").getAttribute("aria-invalid")).toBe("true");
  });

  it("refuses a price below $1.00 and a feature line without a colon", async () => {
    const { api } = renderBillingPage({ owner: true });

    await userEvent.click(await screen.findByRole("button", { name: "Create Plan" }));
    const dialog = within(await screen.findByRole("dialog"));
    await userEvent.type(dialog.getByLabelText("Plan name"), "Tiny");
    await userEvent.type(dialog.getByLabelText("Price (USD per period)"), "0.50");
    await userEvent.type(dialog.getByLabelText("Included calls"), "1");
    await userEvent.type(dialog.getByLabelText("Features"), "just words");
    await userEvent.click(dialog.getByRole("button", { name: "Create Plan" }));

    expect(dialog.getByText("Price must be at least 100 cents ($1.00)")).toBeDefined();
    expect(dialog.getByText(/Write each feature as 'key: value'/)).toBeDefined();
    expect(api.callsTo(`POST ${APP}/packages/`)).toHaveLength(0);
  });

  it("edits a plan with PATCH and deactivates one after confirmation", async () => {
    const { api } = renderBillingPage({
      owner: true,
      packages: [packageFixture()],
      extra: {
        [`PATCH ${APP}/packages/plan-pro/`]: ({ body }) => {
          api.state.packages = [packageFixture({ ...(body as object) })];
          return jsonResponse(api.state.packages[0]);
        },
        [`DELETE ${APP}/packages/plan-pro/`]: () => {
          api.state.packages = [{ ...packageFixture(), is_active: false }];
          return new Response(null, { status: 204 });
        },
      },
    });

    // The owner previews the grid; the server refuses subscribing to one's own app.
    expect((await screen.findByRole("button", { name: "Subscribe to Pro" })).hasAttribute("disabled")).toBe(
      true,
    );
    await userEvent.click(screen.getByRole("button", { name: "Edit Pro" }));
    const dialog = within(await screen.findByRole("dialog", { name: "Edit Pro" }));
    expect((dialog.getByLabelText("Price (USD per period)") as HTMLInputElement).value).toBe("5.00");
    expect((dialog.getByLabelText("Features") as HTMLTextAreaElement).value).toBe("Support: Email");
    await userEvent.clear(dialog.getByLabelText("Included calls"));
    await userEvent.type(dialog.getByLabelText("Included calls"), "250");
    await userEvent.click(dialog.getByRole("button", { name: "Save Plan" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    expect(api.callsTo(`PATCH ${APP}/packages/plan-pro/`)[0]?.body).toMatchObject({
      price_cents: 500,
      included_calls: 250,
    });

    await userEvent.click(screen.getByRole("button", { name: "Deactivate Pro" }));
    const confirm = within(await screen.findByRole("dialog", { name: "Deactivate plan?" }));
    await userEvent.click(confirm.getByRole("button", { name: "Deactivate" }));

    const mine = within(screen.getByRole("list", { name: "Your plans" }));
    expect(await mine.findByText("Inactive")).toBeDefined();
    expect(api.callsTo(`DELETE ${APP}/packages/plan-pro/`)).toHaveLength(1);
    expect(await screen.findByRole("button", { name: "Not Available" })).toBeDefined();
  });
});
