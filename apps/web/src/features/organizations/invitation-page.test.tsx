import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { jsonResponse, stubFetch } from "../../test/fetch-stub";
import { currentPath, renderRoute, renderSignedIn } from "../../test/render-route";

const preview = {
  organization_id: "org-acme",
  organization_name: "Acme",
  email: "ada@example.com",
  role: "developer",
  invited_by: "Olive Owner",
  expires_at: "2025-02-08T10:00:00.000Z",
  status: "pending",
  email_matches: true,
};

describe("invitation page", () => {
  it("shows the organization, role and inviter, and joins", async () => {
    const api = stubSignedInApi({
      "GET /api/invitations/tok-1/": () => jsonResponse(preview),
      "POST /api/invitations/tok-1/accept/": () => jsonResponse({}),
      "GET /api/organizations/org-acme/": () => jsonResponse({ message: "later" }, 500),
    });
    const { router } = renderSignedIn("/invitations/tok-1");

    expect(await screen.findByRole("heading", { name: "Acme" })).toBeDefined();
    expect(screen.getByText("Keys, calls and apps")).toBeDefined();
    expect(screen.getByText(/Invited by Olive Owner/)).toBeDefined();

    await userEvent.click(screen.getByRole("button", { name: "Join Acme" }));

    await waitFor(() => expect(currentPath(router)).toBe("/organizations/org-acme"));
    expect(api.callsTo("POST /api/invitations/tok-1/accept/")).toHaveLength(1);
    expect(await screen.findByText("You joined Acme.")).toBeDefined();
  });

  it("says which address was invited when the signed-in person's is another", async () => {
    stubSignedInApi({
      "GET /api/invitations/tok-1/": () =>
        jsonResponse({ ...preview, email: "boss@acme.test", email_matches: false }),
    });
    renderSignedIn("/invitations/tok-1");

    const notice = await screen.findByText(/It was sent to boss@acme.test/);
    await waitFor(() => expect(notice.textContent).toContain("you are signed in as ada@example.com"));
    expect(screen.queryByRole("button", { name: "Join Acme" })).toBeNull();
  });

  it("says a revoked invitation is withdrawn", async () => {
    stubSignedInApi({ "GET /api/invitations/tok-1/": () => jsonResponse({ ...preview, status: "revoked" }) });
    renderSignedIn("/invitations/tok-1");

    expect(await screen.findByText("This invitation was withdrawn. Ask for a new one.")).toBeDefined();
    expect(screen.queryByRole("button", { name: "Join Acme" })).toBeNull();
  });

  it("asks a signed-out visitor to sign in or sign up, remembering the link to come back to", async () => {
    const api = stubFetch({});
    const { router } = renderRoute("/invitations/tok-1");

    const main = await screen.findByRole("main");
    expect(within(main).getByRole("link", { name: "Create an account" }).getAttribute("href")).toBe(
      "/register",
    );
    await userEvent.click(within(main).getByRole("link", { name: "Sign in" }));

    await waitFor(() => expect(currentPath(router)).toBe("/login"));
    expect(router.state.location.state).toMatchObject({ from: { pathname: "/invitations/tok-1" } });
    expect(api.callsTo("GET /api/invitations/tok-1/")).toHaveLength(0);
  });
});
