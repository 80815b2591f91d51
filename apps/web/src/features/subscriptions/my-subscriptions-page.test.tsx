import type { AccountSubscription } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { subscriptionFixture } from "../../test/billing-fixtures";
import { jsonResponse } from "../../test/fetch-stub";
import { renderRoute } from "../../test/render-route";

const LIST = "GET /api/subscriptions/";
const formatDate = (iso: string) => new Date(iso).toLocaleDateString();

function accountSubscription(overrides: Partial<AccountSubscription> = {}): AccountSubscription {
  return { ...subscriptionFixture(), application_name: "My App", ...overrides };
}

function renderPage(subscriptions: AccountSubscription[], extra: Parameters<typeof stubSignedInApi>[0] = {}) {
  const state = { subscriptions };
  const api = stubSignedInApi({ [LIST]: () => jsonResponse(state.subscriptions), ...extra });
  renderRoute("/subscriptions", { auth: createTestAuth("signed-in") });
  return { api, state };
}

const item = (name: string) => screen.getByRole("listitem", { name });

describe("My subscriptions", () => {
  it("lists every subscription across apps: app, plan, status, period, calls used and the renewal", async () => {
    renderPage([
      accountSubscription({ id: "s1", package_name: "Pro", calls_used: 40, calls_included: 100 }),
      accountSubscription({
        id: "s2",
        package_name: "Team",
        application_slug: "code-helper",
        application_name: "Code Helper",
        cancel_at_period_end: true,
      }),
    ]);

    const pro = within(await screen.findByRole("listitem", { name: "Pro" }));
    expect(pro.getByRole("link", { name: "My App" }).getAttribute("href")).toBe("/explore/my-app");
    expect(pro.getByText("active")).toBeDefined();
    expect(pro.getByText("40 / 100")).toBeDefined();
    const end = formatDate("2024-05-31T10:00:00.000Z");
    expect(pro.getByText(new RegExp(`Renews on ${end}`))).toBeDefined();
    expect(pro.getByText(`Current period: ${formatDate("2024-05-01T10:00:00.000Z")} – ${end}`)).toBeDefined();
    expect(pro.getByRole("button", { name: "Cancel Pro subscription" })).toBeDefined();
    expect(pro.queryByRole("button", { name: /Resume/ })).toBeNull();

    const team = within(item("Team"));
    expect(team.getByRole("link", { name: "Code Helper" }).getAttribute("href")).toBe("/explore/code-helper");
    expect(team.getByText(new RegExp(`Ends on ${end}`))).toBeDefined();
    expect(team.getByText("Canceling")).toBeDefined();
    expect(team.getByRole("button", { name: "Resume Team subscription" })).toBeDefined();
    expect(team.queryByRole("button", { name: /Cancel/ })).toBeNull();
  });

  it("cancels at period end through the subscription's own app, then offers Resume", async () => {
    const route = "POST /api/app/code-helper/subscriptions/s2/cancel/";
    const canceled = accountSubscription({
      id: "s2",
      application_slug: "code-helper",
      application_name: "Code Helper",
      cancel_at_period_end: true,
    });
    const { api, state } = renderPage(
      [accountSubscription({ id: "s2", application_slug: "code-helper", application_name: "Code Helper" })],
      {
        [route]: () => {
          state.subscriptions = [canceled];
          return jsonResponse(canceled);
        },
      },
    );

    await userEvent.click(await screen.findByRole("button", { name: "Cancel Pro subscription" }));
    const dialog = await screen.findByRole("dialog", { name: "Cancel subscription?" });
    await userEvent.click(within(dialog).getByRole("button", { name: "Cancel Subscription" }));

    expect(await within(item("Pro")).findByRole("button", { name: "Resume Pro subscription" })).toBeDefined();
    expect(api.callsTo(route)).toHaveLength(1);
    expect(api.callsTo(LIST)).toHaveLength(2);
  });

  it("resumes a pending cancel, and shows the server's refusal when it cannot", async () => {
    const route = "PATCH /api/app/my-app/subscriptions/sub-1/";
    const { api } = renderPage([accountSubscription({ cancel_at_period_end: true })], {
      [route]: () =>
        jsonResponse(
          {
            code: "conflict",
            message: "This plan was withdrawn from sale: the subscription ends with its period",
            status: 409,
          },
          409,
        ),
    });

    await userEvent.click(await screen.findByRole("button", { name: "Resume Pro subscription" }));

    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("Failed to resume subscription");
    expect(alert.textContent).toContain("withdrawn from sale");
    expect(api.callsTo(route)[0]?.body).toEqual({ cancel_at_period_end: false });
  });

  it("says where to find plans when there are none", async () => {
    renderPage([]);
    expect(await screen.findByText(/Subscribe to a plan from an app's page in Explore/)).toBeDefined();
    expect(screen.queryByRole("list", { name: "Subscriptions" })).toBeNull();
  });

  it("says 'Failed to load subscriptions' when the list cannot be read", async () => {
    renderPage([], { [LIST]: () => jsonResponse({ message: "down" }, 500) });
    await waitFor(() =>
      expect(screen.getByRole("alert").textContent).toContain("Failed to load subscriptions"),
    );
  });
});
