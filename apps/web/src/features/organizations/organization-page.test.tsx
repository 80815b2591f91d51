import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { ACTING_ORGANIZATION_STORAGE_KEY } from "../../lib/acting-account";
import { stubSignedInApi } from "../../test/api-stubs";
import { jsonResponse, type RecordedRequest } from "../../test/fetch-stub";
import { profileFixture } from "../../test/fixtures";
import { memberFixture, organizationFixture, storeSession } from "../../test/organization-fixtures";
import { currentPath, renderSignedIn } from "../../test/render-route";

const ORG = "org-acme";
const me = profileFixture().user;
const acme = organizationFixture({ id: ORG, name: "Acme", role: "admin" });
const ada = memberFixture({
  user_id: me.id,
  name: "Ada L.",
  email: me.email,
  role: "admin",
  monthly_budget_cents: null,
});
const grace = memberFixture();
const owner = memberFixture({
  user_id: "u-owner",
  name: "Olive Owner",
  email: "olive@example.com",
  role: "owner",
});

function stubOrganizationApi(extra = {}) {
  return stubSignedInApi({
    [`GET /api/organizations/${ORG}/`]: () => jsonResponse(acme),
    [`GET /api/organizations/${ORG}/members/`]: () => jsonResponse([owner, ada, grace]),
    ...extra,
  });
}

describe("organization page", () => {
  it("lists members with their role, budget and spend; an admin changes a developer's role and budget", async () => {
    const api = stubOrganizationApi({
      [`PATCH /api/organizations/${ORG}/members/u-grace/`]: ({ body }: RecordedRequest) =>
        jsonResponse({ ...grace, ...(body as object) }),
    });
    renderSignedIn(`/organizations/${ORG}`);

    expect(await screen.findByRole("heading", { name: "Acme", level: 1 })).toBeDefined();
    const members = await screen.findByRole("list", { name: "Members" });
    const rows = within(members).getAllByRole("listitem");
    expect(rows).toHaveLength(3);
    // An admin does not make or unmake owners: the owner's role is shown, not offered.
    expect(within(rows[0] as HTMLElement).queryByRole("combobox")).toBeNull();
    expect(within(rows[0] as HTMLElement).queryByRole("button", { name: "Remove Olive Owner" })).toBeNull();
    expect(within(rows[1] as HTMLElement).getByRole("button", { name: "Leave Acme" })).toBeDefined();

    const role = screen.getByRole("combobox", { name: "Role of Grace Hopper" });
    expect([...(role as HTMLSelectElement).options].map((option) => option.value)).toEqual([
      "admin",
      "developer",
      "billing",
      "viewer",
    ]);
    expect(within(rows[2] as HTMLElement).getByText("$12.35 of $50.00 spent this month")).toBeDefined();

    await userEvent.selectOptions(role, "billing");
    await waitFor(() =>
      expect(api.callsTo(`PATCH /api/organizations/${ORG}/members/u-grace/`)[0]?.body).toEqual({
        role: "billing",
      }),
    );

    const budget = screen.getByLabelText("Monthly budget of Grace Hopper (USD)");
    expect((budget as HTMLInputElement).value).toBe("50.00");
    await userEvent.clear(budget);
    await userEvent.type(budget, "12.5{Enter}");
    await waitFor(() =>
      expect(api.callsTo(`PATCH /api/organizations/${ORG}/members/u-grace/`)[1]?.body).toEqual({
        monthly_budget_cents: 1250,
      }),
    );
    expect(await screen.findByText("Budget saved")).toBeDefined();

    // An empty budget is no budget.
    await userEvent.clear(budget);
    expect(screen.queryByText("Budget saved")).toBeNull();
    await userEvent.type(budget, "{Enter}");
    await waitFor(() =>
      expect(api.callsTo(`PATCH /api/organizations/${ORG}/members/u-grace/`)[2]?.body).toEqual({
        monthly_budget_cents: null,
      }),
    );
  });

  it("shows the API's refusal when the role may not do it", async () => {
    stubOrganizationApi({
      [`PATCH /api/organizations/${ORG}/members/u-grace/`]: () =>
        jsonResponse(
          { code: "organization_role", message: "Your role (admin) may not change budgets", status: 403 },
          403,
        ),
    });
    renderSignedIn(`/organizations/${ORG}`);

    const budget = await screen.findByLabelText("Monthly budget of Grace Hopper (USD)");
    await userEvent.type(budget, "0{Enter}");

    expect((await screen.findByRole("alert")).textContent).toContain(
      "Your role (admin) may not change budgets",
    );
  });

  it("leaves the organization: back to the personal account and the list of organizations", async () => {
    storeSession({ id: ORG, name: "Acme", role: "admin" });
    const api = stubOrganizationApi({
      "GET /api/organizations/": () => jsonResponse([acme]),
      [`DELETE /api/organizations/${ORG}/members/${me.id}/`]: () => new Response(null, { status: 204 }),
    });
    const { router } = renderSignedIn(`/organizations/${ORG}`);

    await userEvent.click(await screen.findByRole("button", { name: "Leave Acme" }));
    const dialog = await screen.findByRole("dialog", { name: "Leave Acme?" });
    await userEvent.click(within(dialog).getByRole("button", { name: "Leave" }));

    await waitFor(() => expect(currentPath(router)).toBe("/organizations"));
    expect(api.callsTo(`DELETE /api/organizations/${ORG}/members/${me.id}/`)).toHaveLength(1);
    expect(window.localStorage.getItem(ACTING_ORGANIZATION_STORAGE_KEY)).toBeNull();
  });

  it("invites by address with a role, said in words, and revokes a pending invitation", async () => {
    const pending = {
      id: "inv-1",
      email: "linus@example.com",
      role: "viewer",
      invited_by: "Ada L.",
      created_at: "2025-02-01T10:00:00.000Z",
      expires_at: "2025-02-08T10:00:00.000Z",
      status: "pending",
    };
    const api = stubOrganizationApi({
      [`GET /api/organizations/${ORG}/invitations/`]: () =>
        jsonResponse([pending, { ...pending, id: "inv-2", email: "old@example.com", status: "accepted" }]),
      [`POST /api/organizations/${ORG}/invitations/`]: ({ body }: RecordedRequest) =>
        jsonResponse({ ...pending, id: "inv-3", ...(body as object) }, 201),
      [`DELETE /api/organizations/${ORG}/invitations/inv-1/`]: () => new Response(null, { status: 204 }),
    });
    renderSignedIn(`/organizations/${ORG}?tab=invitations`);

    const form = await screen.findByRole("form", { name: "Invite a member" });
    const role = within(form).getByRole("combobox", { name: "Role" });
    expect(
      within(role).getByRole("option", {
        name: "Billing: Wallet, plans, receipts, payment methods and payouts",
      }),
    ).toBeDefined();
    expect(within(role).queryByRole("option", { name: /^Owner/ })).toBeNull();

    await userEvent.click(within(form).getByRole("button", { name: "Send invitation" }));
    expect(within(form).getByText("Email must be an email address")).toBeDefined();
    expect(api.callsTo(`POST /api/organizations/${ORG}/invitations/`)).toHaveLength(0);

    await userEvent.type(within(form).getByRole("textbox", { name: "Email" }), "new@example.com");
    await userEvent.selectOptions(role, "billing");
    await userEvent.click(within(form).getByRole("button", { name: "Send invitation" }));
    expect(await within(form).findByText("Invitation sent to new@example.com.")).toBeDefined();
    expect(api.callsTo(`POST /api/organizations/${ORG}/invitations/`)[0]?.body).toEqual({
      email: "new@example.com",
      role: "billing",
    });

    const list = await screen.findByRole("list", { name: "Pending invitations" });
    expect(within(list).getAllByRole("listitem")).toHaveLength(1);
    await userEvent.click(
      within(list).getByRole("button", { name: "Revoke the invitation of linus@example.com" }),
    );
    await waitFor(() =>
      expect(api.callsTo(`DELETE /api/organizations/${ORG}/invitations/inv-1/`)).toHaveLength(1),
    );
  });

  it("shows a month's usage by member, key and app, and another month when picked", async () => {
    const usage = (month: string, charged: number) => ({
      month,
      total: { calls: 1234, charged_cents: charged },
      by_member: [{ user_id: "u-grace", name: "Grace Hopper", calls: 1234, charged_cents: charged }],
      by_key: [{ key_id: null, name: "Deleted keys", calls: 1234, charged_cents: charged }],
      by_app: [],
    });
    const thisMonth = new Date().toISOString().slice(0, 7);
    stubOrganizationApi({
      [`GET /api/organizations/${ORG}/usage/?month=${thisMonth}`]: () =>
        jsonResponse(usage(thisMonth, 123_456)),
      [`GET /api/organizations/${ORG}/usage/?month=2025-01`]: () => jsonResponse(usage("2025-01", 99)),
    });
    renderSignedIn(`/organizations/${ORG}?tab=usage`);

    const byMember = await screen.findByRole("table", { name: "By member" });
    expect(within(byMember).getByRole("row", { name: /Grace Hopper/ }).textContent).toContain("$1,234.56");
    expect(screen.getByRole("table", { name: "By API key" }).textContent).toContain("Deleted keys");
    expect(screen.getByText("No calls this month.")).toBeDefined();

    const month = screen.getByLabelText("Month (UTC)");
    await userEvent.clear(month);
    await userEvent.type(month, "2025-01");
    await waitFor(() =>
      expect(screen.getByRole("table", { name: "By member" }).textContent).toContain("$0.99"),
    );
  });

  it("pages through the audit log", async () => {
    const event = (id: string, action: string) => ({
      id,
      at: "2025-02-01T10:00:00.000Z",
      actor: { user_id: me.id, name: "Ada L.", email: me.email },
      action,
      target: "grace@example.com",
      details: {},
    });
    stubOrganizationApi({
      [`GET /api/organizations/${ORG}/audit/?page=1`]: () =>
        jsonResponse({
          data: [event("e2", "member.role_changed")],
          page: 1,
          page_size: 1,
          total: 2,
          has_more: true,
        }),
      [`GET /api/organizations/${ORG}/audit/?page=2`]: () =>
        jsonResponse({
          data: [{ ...event("e1", "member.invited"), actor: null }],
          page: 2,
          page_size: 1,
          total: 2,
          has_more: false,
        }),
    });
    renderSignedIn(`/organizations/${ORG}?tab=audit`);

    const list = await screen.findByRole("list", { name: "Audit events" });
    expect(list.textContent).toContain("member.role_changed");
    expect(screen.getByText("Page 1 of 2")).toBeDefined();
    await userEvent.click(screen.getByRole("button", { name: "Older" }));
    expect(await screen.findByText("Page 2 of 2")).toBeDefined();
    expect(screen.getByRole("list", { name: "Audit events" }).textContent).toContain("A former member");
    expect((screen.getByRole("button", { name: "Older" }) as HTMLButtonElement).disabled).toBe(true);
  });

  it("shows a viewer the settings read-only and no invitations, usage or audit log", async () => {
    stubOrganizationApi({
      [`GET /api/organizations/${ORG}/`]: () => jsonResponse({ ...acme, role: "viewer" }),
    });
    renderSignedIn(`/organizations/${ORG}?tab=settings`);

    const tabs = await screen.findByRole("tablist", { name: "Organization sections" });
    expect(
      within(tabs)
        .getAllByRole("tab")
        .map((tab) => tab.textContent),
    ).toEqual(["Members", "Settings"]);
    expect((screen.getByRole("textbox", { name: "Name" }) as HTMLInputElement).disabled).toBe(true);
    expect(screen.queryByRole("button", { name: "Save Changes" })).toBeNull();
  });

  it("says so when the organization is not the person's", async () => {
    stubSignedInApi({
      [`GET /api/organizations/${ORG}/`]: () =>
        jsonResponse({ code: "not_found", message: "Not found" }, 404),
    });
    renderSignedIn(`/organizations/${ORG}`);

    expect(await screen.findByRole("heading", { name: "Organization not found" })).toBeDefined();
  });
});
