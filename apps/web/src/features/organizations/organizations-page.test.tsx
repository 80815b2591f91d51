import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { ACTING_ORGANIZATION_STORAGE_KEY } from "../../lib/acting-account";
import { stubSignedInApi } from "../../test/api-stubs";
import { jsonResponse } from "../../test/fetch-stub";
import { organizationFixture } from "../../test/organization-fixtures";
import { currentPath, renderSignedIn } from "../../test/render-route";

describe("organizations page", () => {
  it("says there are none yet, checks the form by the API's rules, and creates one", async () => {
    const created = organizationFixture({ id: "org-new", name: "Initech", role: "owner", member_count: 1 });
    const api = stubSignedInApi({
      "POST /api/organizations/": () => jsonResponse(created, 201),
      "GET /api/organizations/org-new/": () => jsonResponse(created),
      "GET /api/organizations/org-new/members/": () => jsonResponse([]),
    });
    const { router } = renderSignedIn("/organizations");

    expect(await screen.findByRole("heading", { name: "No organizations yet" })).toBeDefined();
    const form = screen.getByRole("form", { name: "Create organization" });
    await userEvent.type(within(form).getByRole("textbox", { name: "Name" }), "I");
    await userEvent.type(within(form).getByRole("textbox", { name: "Billing email" }), "nope");
    await userEvent.click(within(form).getByRole("button", { name: "Create organization" }));
    expect(within(form).getByText("Name must be at least 2 characters")).toBeDefined();
    expect(within(form).getByText("Billing email must be an email address")).toBeDefined();
    expect(api.callsTo("POST /api/organizations/")).toHaveLength(0);

    await userEvent.type(within(form).getByRole("textbox", { name: "Name" }), "nitech");
    await userEvent.clear(within(form).getByRole("textbox", { name: "Billing email" }));
    await userEvent.click(within(form).getByRole("button", { name: "Create organization" }));

    await waitFor(() => expect(currentPath(router)).toBe("/organizations/org-new"));
    expect(api.callsTo("POST /api/organizations/")[0]?.body).toEqual({
      name: "Initech",
      billing_email: null,
      billing_address: "",
      tax_id: "",
    });
  });

  it("lists the person's organizations with their role and acts for one", async () => {
    stubSignedInApi({
      "GET /api/organizations/": () =>
        jsonResponse([
          organizationFixture({ id: "org-acme", name: "Acme", role: "billing", member_count: 3 }),
        ]),
    });
    renderSignedIn("/organizations");

    const list = await screen.findByRole("list", { name: "Your organizations" });
    expect(within(list).getByText("3 members")).toBeDefined();
    expect(within(list).getByText("billing")).toBeDefined();
    await userEvent.click(within(list).getByRole("button", { name: "Act as Acme" }));

    expect(await within(list).findByRole("button", { name: "Act as yourself" })).toBeDefined();
    expect(JSON.parse(window.localStorage.getItem(ACTING_ORGANIZATION_STORAGE_KEY) ?? "null")).toMatchObject({
      id: "org-acme",
      role: "billing",
    });
    expect(screen.getByRole("button", { name: "Acting as Acme · billing: switch account" })).toBeDefined();
  });

  it("shows the error when the list cannot be read", async () => {
    stubSignedInApi({
      "GET /api/organizations/": () => jsonResponse({ message: "Database unavailable" }, 500),
    });
    renderSignedIn("/organizations");

    expect((await screen.findByRole("alert")).textContent).toContain("Database unavailable");
  });
});
