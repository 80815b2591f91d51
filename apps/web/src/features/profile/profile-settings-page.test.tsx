import type { Profile } from "@promptmint/contracts";
import { act, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { createTestAuth } from "../../test/auth-state";
import { walletFixture } from "../../test/billing-fixtures";
import { jsonResponse, stubFetch } from "../../test/fetch-stub";
import { profileFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";

function input(label: string): HTMLInputElement {
  return screen.getByLabelText(label) as HTMLInputElement;
}

/** A profile API that remembers the last update, like the server. */
function stubProfileApi(initial: Profile, patch?: (body: unknown) => Response) {
  let current = initial;
  return stubFetch({
    "GET /api/auth/profile/": () => jsonResponse(current),
    "GET /api/wallet/": () => jsonResponse(walletFixture({ balance_micros: 12_500_000 })),
    "PATCH /api/auth/profile/": ({ body }) => {
      if (patch) return patch(body);
      const update = body as Profile;
      current = { user: update.user, creator: update.creator };
      return jsonResponse(current);
    },
  });
}

function renderProfile() {
  return renderRoute("/profile", { auth: createTestAuth("signed-in") });
}

describe("profile settings", () => {
  it("shows a spinner, then the profile's fields with the email locked", async () => {
    stubProfileApi(profileFixture());
    renderProfile();

    expect(screen.getByRole("heading", { name: "Profile Settings" })).toBeDefined();
    expect(screen.getByText("Loading profile...")).toBeDefined();

    expect(((await screen.findByLabelText("First Name")) as HTMLInputElement).value).toBe("Ada");
    expect(input("Last Name").value).toBe("Lovelace");
    expect(input("Username").value).toBe("ada");
    expect(input("Display Name").value).toBe("Ada L.");
    const email = input("Email");
    expect(email.value).toBe("ada@example.com");
    expect(email.disabled).toBe(true);
    const noteId = email.getAttribute("aria-describedby") ?? "";
    expect(document.getElementById(noteId)?.textContent).toBe("Email cannot be changed through this form.");
  });

  it("shows a creator's Plan and Credits (their wallet balance, linked to the wallet)", async () => {
    const profile = profileFixture();
    stubProfileApi(profile);
    renderProfile();

    const panel = (await screen.findByRole("heading", { name: "Account Information" })).closest(
      "div.rounded-xl",
    );
    if (!(panel instanceof HTMLElement)) throw new Error("no Account Information panel");
    const info = within(panel);
    expect(info.getByText(profile.user.id)).toBeDefined();
    expect(info.getByText(new Date(profile.user.date_joined).toLocaleDateString())).toBeDefined();
    expect(info.getByText("Active")).toBeDefined();
    expect(await info.findByText("$12.50")).toBeDefined();
    expect(info.getByRole("link", { name: "Open wallet" }).getAttribute("href")).toBe("/wallet");
    expect(info.getByText("Plan")).toBeDefined();
    expect(info.getByText("pro")).toBeDefined();
    expect(info.getByText("Credits")).toBeDefined();
    expect(info.queryByText("Wallet Balance")).toBeNull();
  });

  it("shows a consumer's Wallet Balance and no plan", async () => {
    const profile = profileFixture({ creator: null });
    stubProfileApi({ ...profile, user: { ...profile.user, is_active: false, date_joined: "" } });
    renderProfile();

    expect(await screen.findByText("Inactive")).toBeDefined();
    expect(screen.getByText("N/A")).toBeDefined();
    expect(await screen.findByText("$12.50")).toBeDefined();
    expect(screen.getByText("Wallet Balance")).toBeDefined();
    expect(screen.queryByText("Plan")).toBeNull();
    expect(screen.queryByText("Credits")).toBeNull();
  });

  it("says what the free plan means", async () => {
    const profile = profileFixture();
    stubProfileApi({
      ...profile,
      creator: { ...(profile.creator as NonNullable<typeof profile.creator>), plan: "free" },
    });
    renderProfile();

    expect(
      await screen.findByText("Free — no monthly fee; the platform takes its fee per paid call"),
    ).toBeDefined();
    expect(screen.getByText("Credits")).toBeDefined();
  });

  it("shows 'Failed to fetch profile' when the profile cannot be loaded", async () => {
    stubFetch({ "GET /api/auth/profile/": () => jsonResponse({ message: "boom" }, 500) });
    renderProfile();

    expect((await screen.findByRole("alert")).textContent).toContain("Failed to fetch profile");
  });

  it("saves the whole user and creator with the edits, then confirms for 3 seconds", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const profile = profileFixture();
    const api = stubProfileApi(profile);
    const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime });
    renderProfile();

    await user.clear(await screen.findByLabelText("First Name"));
    await user.type(input("First Name"), "Augusta");
    await user.clear(input("Display Name"));
    await user.type(input("Display Name"), "Countess");
    await user.click(screen.getByRole("button", { name: "Save Changes" }));

    expect(await screen.findByRole("status")).toHaveProperty("textContent", "Profile updated successfully!");
    const [request] = api.callsTo("PATCH /api/auth/profile/");
    expect(request?.body).toEqual({
      user: { ...profile.user, first_name: "Augusta", display_name: "Countess" },
      creator: { ...profile.creator, display_name: "Countess" },
    });
    expect(input("First Name").value).toBe("Augusta");

    act(() => vi.advanceTimersByTime(2900));
    expect(screen.queryByText("Profile updated successfully!")).not.toBeNull();
    act(() => vi.advanceTimersByTime(100));
    expect(screen.queryByText("Profile updated successfully!")).toBeNull();
  });

  it("sends creator null for a user without a creator record", async () => {
    const profile = profileFixture({ creator: null });
    const api = stubProfileApi(profile);
    renderProfile();

    await userEvent.type(await screen.findByLabelText("Last Name"), "-King");
    await userEvent.click(screen.getByRole("button", { name: "Save Changes" }));

    await screen.findByText("Profile updated successfully!");
    expect(api.callsTo("PATCH /api/auth/profile/")[0]?.body).toEqual({
      user: { ...profile.user, last_name: "Lovelace-King" },
      creator: null,
    });
  });

  it("shows 'Saving...' while the update is on its way", async () => {
    stubFetch({
      "GET /api/auth/profile/": () => jsonResponse(profileFixture()),
      "PATCH /api/auth/profile/": () => new Promise<Response>(() => undefined),
    });
    renderProfile();

    await userEvent.type(await screen.findByLabelText("First Name"), "!");
    await userEvent.click(screen.getByRole("button", { name: "Save Changes" }));

    const saving = (await screen.findByRole("button", { name: "Saving..." })) as HTMLButtonElement;
    expect(saving.disabled).toBe(true);
  });

  it("shows the server's message and its field errors next to the inputs", async () => {
    stubProfileApi(profileFixture(), () =>
      jsonResponse(
        {
          code: "conflict",
          message: "That username is taken",
          status: 409,
          fields: { "user.username": "is already taken" },
        },
        409,
      ),
    );
    renderProfile();

    await userEvent.type(await screen.findByLabelText("Username"), "2");
    await userEvent.click(screen.getByRole("button", { name: "Save Changes" }));

    expect((await screen.findByRole("alert")).textContent).toContain("That username is taken");
    const username = input("Username");
    expect(username.getAttribute("aria-invalid")).toBe("true");
    const describedBy = username.getAttribute("aria-describedby")?.split(" ") ?? [];
    expect(describedBy.map((id) => document.getElementById(id)?.textContent)).toContain("is already taken");
    expect(screen.queryByText("Profile updated successfully!")).toBeNull();
  });

  it("checks the username before sending", async () => {
    const api = stubProfileApi(profileFixture());
    renderProfile();

    await userEvent.clear(await screen.findByLabelText("Username"));
    await userEvent.click(screen.getByRole("button", { name: "Save Changes" }));

    expect(await screen.findByText("must not be empty")).toBeDefined();
    expect(input("Username").getAttribute("aria-invalid")).toBe("true");
    expect(api.callsTo("PATCH /api/auth/profile/")).toHaveLength(0);
  });
});
