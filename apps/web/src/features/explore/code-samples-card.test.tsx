import { screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse } from "../../test/fetch-stub";
import { apiKeyFixture, exploreAppDetailFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";

const DETAIL = "GET /api/explore/apps/haiku-writer";
const KEY = "pm_a1b2c3d4e5f6g7h8i9j0";
const created = {
  id: "key-1",
  name: "Explore: haiku-writer",
  prefix: "pm_a1b2c3",
  key: KEY,
  created_at: "2026-01-01T00:00:00.000Z",
  last_used_at: null,
  spend_limit_cents: null,
  limit_reset: "never",
  expires_at: null,
  allowed_apps: null,
  spent_micros: 0,
  period_resets_at: null,
  made_by: null,
};

describe("the Explore snippet and the signed-in person's key", () => {
  it("creates a key for the snippet and fills it in, masked until Reveal; copying takes the full key", async () => {
    const api = stubSignedInApi({
      [DETAIL]: () => jsonResponse(exploreAppDetailFixture()),
      "GET /api/keys/": () => jsonResponse([apiKeyFixture({ prefix: "pm_old123" })]),
      "POST /api/keys/": () => jsonResponse(created, 201),
      "GET /api/app/": () => jsonResponse([]),
      "GET /api/app/haiku-writer/subscriptions/": () => jsonResponse([]),
    });
    const writeText = vi.fn(async () => undefined);
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    renderRoute("/explore/haiku-writer", { auth: createTestAuth("signed-in") });

    expect(await screen.findByText(/You have 1 key \(pm_old123…\); a key is shown only once/)).toBeDefined();
    expect(screen.getByRole("tabpanel").textContent).toContain("Bearer YOUR_API_KEY");
    await userEvent.click(screen.getByRole("button", { name: "Create a key for this snippet" }));

    const curl = screen.getByRole("tabpanel");
    await within(curl).findByText(/Bearer pm_a1b2c3••••••••/);
    expect(curl.textContent).not.toContain(KEY);
    expect(api.callsTo("POST /api/keys/")[0]?.body).toEqual({ name: "Explore: haiku-writer" });

    await userEvent.click(within(curl).getByRole("button", { name: "Copy curl" }));
    expect(writeText).toHaveBeenCalledWith(expect.stringContaining(`Bearer ${KEY}`));

    await userEvent.click(screen.getByRole("button", { name: "Reveal" }));
    expect(screen.getByRole("tabpanel").textContent).toContain(`Bearer ${KEY}`);
    await userEvent.click(screen.getByRole("button", { name: "Hide" }));
    expect(screen.getByRole("tabpanel").textContent).not.toContain(KEY);
  });

  it("keeps the named placeholder for a signed-out visitor, with no key to create", async () => {
    stubSignedInApi({ [DETAIL]: () => jsonResponse(exploreAppDetailFixture()) });
    renderRoute("/explore/haiku-writer");

    expect((await screen.findByRole("tabpanel")).textContent).toContain("Bearer YOUR_API_KEY");
    expect(screen.queryByRole("button", { name: "Create a key for this snippet" })).toBeNull();
  });
});
