import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { ACTING_ORGANIZATION_STORAGE_KEY } from "../../lib/acting-account";
import { ORGANIZATION_HEADER_NAME } from "../../lib/api-client";
import { stubSignedInApi } from "../../test/api-stubs";
import { jsonResponse } from "../../test/fetch-stub";
import { organizationFixture, storeSession } from "../../test/organization-fixtures";
import { renderSignedIn } from "../../test/render-route";

const acme = organizationFixture({ id: "org-acme", name: "Acme", role: "developer" });
const globex = organizationFixture({ id: "org-globex", name: "Globex", role: "owner" });

function mainNav() {
  return screen.getByRole("navigation", { name: "Main" });
}

function stubAccountsApi() {
  return stubSignedInApi({
    "GET /api/organizations/": () => jsonResponse([acme, globex]),
    "GET /api/app/": () => jsonResponse([]),
  });
}

describe("account switcher", () => {
  it("switches to an organization: the bar says so, hides what the role cannot use, and the page reloads for it", async () => {
    storeSession();
    const api = stubAccountsApi();
    renderSignedIn("/applications");

    const switcher = await screen.findByRole("button", { name: "Acting as Personal: switch account" });
    await waitFor(() => expect(api.callsTo("GET /api/app/").length).toBeGreaterThan(0));
    expect(within(mainNav()).getByRole("link", { name: "Wallet" })).toBeDefined();
    // Acting for oneself, the organizations are read only when the menu opens.
    expect(api.callsTo("GET /api/organizations/")).toHaveLength(0);

    await userEvent.click(switcher);
    const menu = await screen.findByRole("menu");
    const choices = await within(menu).findAllByRole("menuitemradio");
    expect(choices.map((choice) => choice.textContent)).toEqual(["Personal", "Acmedeveloper", "Globexowner"]);
    expect(choices[0]?.getAttribute("aria-checked")).toBe("true");
    expect(within(menu).getByRole("menuitem", { name: "Create organization" }).getAttribute("href")).toBe(
      "/organizations#create",
    );
    expect(within(menu).queryByRole("menuitem", { name: "Manage organization" })).toBeNull();

    const personalCalls = api.callsTo("GET /api/app/").length;
    await userEvent.click(within(menu).getByRole("menuitemradio", { name: /Acme/ }));

    await screen.findByRole("button", { name: "Acting as Acme · developer: switch account" });
    expect(JSON.parse(window.localStorage.getItem(ACTING_ORGANIZATION_STORAGE_KEY) ?? "null")).toEqual({
      id: "org-acme",
      name: "Acme",
      role: "developer",
    });
    // A developer sees neither the wallet nor subscriptions (read_billing), and still builds and calls.
    expect(within(mainNav()).queryByRole("link", { name: "Wallet" })).toBeNull();
    expect(within(mainNav()).queryByRole("link", { name: "Subscriptions" })).toBeNull();
    expect(within(mainNav()).getByRole("link", { name: "API Test" })).toBeDefined();
    // The previous account's list is gone: the page asked again, for the organization.
    await waitFor(() => expect(api.callsTo("GET /api/app/").length).toBeGreaterThan(personalCalls));
    const headers = api.callsTo("GET /api/app/").map((call) => call.headers.get(ORGANIZATION_HEADER_NAME));
    expect(headers.slice(0, personalCalls).every((header) => header === null)).toBe(true);
    expect(headers.slice(personalCalls).every((header) => header === "org-acme")).toBe(true);
    // The person's own profile is not the organization's: it is not asked for again, nor with the header.
    expect(
      api.callsTo("GET /api/auth/profile/").every((call) => !call.headers.has(ORGANIZATION_HEADER_NAME)),
    ).toBe(true);

    await userEvent.click(screen.getByRole("button", { name: /switch account/ }));
    const again = await screen.findByRole("menu");
    expect(within(again).getByRole("menuitem", { name: "Manage organization" }).getAttribute("href")).toBe(
      "/organizations/org-acme",
    );
    await userEvent.click(within(again).getByRole("menuitemradio", { name: "Personal" }));
    await screen.findByRole("button", { name: "Acting as Personal: switch account" });
    expect(window.localStorage.getItem(ACTING_ORGANIZATION_STORAGE_KEY)).toBeNull();
    expect(within(mainNav()).getByRole("link", { name: "Wallet" })).toBeDefined();
  });

  it("falls back to the personal account, with a toast, when the organization is no longer the person's", async () => {
    storeSession({ id: "org-gone", name: "Initech", role: "admin" });
    const api = stubAccountsApi();
    renderSignedIn("/applications");

    expect(
      await screen.findByText("You are no longer a member of Initech: acting as your personal account."),
    ).toBeDefined();
    await screen.findByRole("button", { name: "Acting as Personal: switch account" });
    expect(window.localStorage.getItem(ACTING_ORGANIZATION_STORAGE_KEY)).toBeNull();
    await waitFor(() => {
      const calls = api.callsTo("GET /api/app/");
      expect(calls.at(-1)?.headers.get(ORGANIZATION_HEADER_NAME)).toBeNull();
    });
  });

  it("takes over a changed role: a member made billing sees the wallet, not the API test", async () => {
    storeSession({ id: "org-acme", name: "Acme", role: "developer" });
    stubSignedInApi({
      "GET /api/organizations/": () => jsonResponse([{ ...acme, role: "billing" }]),
      "GET /api/app/": () => jsonResponse([]),
    });
    renderSignedIn("/applications");

    await screen.findByRole("button", { name: "Acting as Acme · billing: switch account" });
    expect(within(mainNav()).getByRole("link", { name: "Wallet" })).toBeDefined();
    expect(within(mainNav()).queryByRole("link", { name: "API Test" })).toBeNull();
  });

  it("says which account acts in the mobile menu, and switches there", async () => {
    storeSession({ id: "org-globex", name: "Globex", role: "owner" });
    stubAccountsApi();
    renderSignedIn("/applications");

    // The bar itself names the organization on a phone, the menu its role too.
    expect(
      within(mainNav()).getByText((_, element) => element?.textContent === "Acting as Globex", {
        selector: "span.truncate",
      }),
    ).toBeDefined();
    await userEvent.click(screen.getByRole("button", { name: "Open menu" }));
    const panel = document.getElementById("mobile-menu");
    if (!panel) throw new Error("mobile menu not shown");
    expect(within(panel).getByRole("heading", { name: "Acting as Globex · owner" })).toBeDefined();
    expect(within(panel).getByRole("link", { name: "Manage organization" }).getAttribute("href")).toBe(
      "/organizations/org-globex",
    );
    await userEvent.click(await within(panel).findByRole("button", { name: /Acme/ }));

    expect(document.getElementById("mobile-menu")).toBeNull();
    await screen.findByRole("button", { name: "Acting as Acme · developer: switch account" });
  });
});
