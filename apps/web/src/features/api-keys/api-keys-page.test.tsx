import type { ApiKey } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse, type RecordedRequest } from "../../test/fetch-stub";
import { apiKeyFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";

const SECRET = "pm_a1b2c3d4e5f6g7h8i9j0";

/** The keys API, keeping the list like the server (which never lists the secret). */
function stubKeysApi(initial: ApiKey[] = []) {
  let keys = initial;
  return stubSignedInApi({
    "GET /api/keys/": () => jsonResponse(keys),
    "POST /api/keys/": ({ body }: RecordedRequest) => {
      const created = apiKeyFixture({
        id: "key-new",
        name: (body as { name: string }).name,
        prefix: "pm_a1b2c3",
      });
      keys = [created, ...keys];
      return jsonResponse({ ...created, key: SECRET }, 201);
    },
    "DELETE /api/keys/key-1/": () => {
      keys = keys.filter((key) => key.id !== "key-1");
      return new Response(null, { status: 204 });
    },
  });
}

function renderKeys() {
  return renderRoute("/api-keys", { auth: createTestAuth("signed-in") });
}

describe("API keys", () => {
  it("invites to create a first key", async () => {
    stubKeysApi();
    renderKeys();

    expect(await screen.findByRole("heading", { name: "No API keys" })).toBeDefined();
  });

  it("lists keys by name and prefix, 'Never' when unused", async () => {
    stubKeysApi([
      apiKeyFixture(),
      apiKeyFixture({ id: "key-2", name: "CI", last_used_at: "2024-05-03T08:00:00.000Z" }),
    ]);
    renderKeys();

    const row = (await screen.findByRole("rowheader", { name: "Production server" })).closest(
      "tr",
    ) as HTMLElement;
    expect(within(row).getByText("pm_a1b2c3…")).toBeDefined();
    expect(within(row).getByText("Never")).toBeDefined();
    const ci = screen.getByRole("rowheader", { name: "CI" }).closest("tr") as HTMLElement;
    expect(within(ci).getByText(new Date("2024-05-03T08:00:00.000Z").toLocaleString())).toBeDefined();
  });

  it("shows a new key once, with a Copy button, until dismissed", async () => {
    const writeText = vi.fn(async () => undefined);
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    const api = stubKeysApi();
    renderKeys();

    await userEvent.click(await screen.findByRole("button", { name: "Create Key" }));
    expect(await screen.findByText("Key name is required")).toBeDefined();

    await userEvent.type(screen.getByLabelText("Key Name"), "Laptop");
    await userEvent.click(screen.getByRole("button", { name: "Create Key" }));

    const shown = (await screen.findByLabelText("New API key")) as HTMLInputElement;
    expect(shown.value).toBe(SECRET);
    expect(screen.getByText(/It won't be shown again\./)).toBeDefined();
    expect(api.callsTo("POST /api/keys/")[0]?.body).toEqual({ name: "Laptop" });
    expect(await screen.findByRole("rowheader", { name: "Laptop" })).toBeDefined();
    expect(screen.queryAllByText(SECRET, { exact: false })).toHaveLength(0); // only inside the input

    await userEvent.click(screen.getByRole("button", { name: "Copy" }));
    expect(writeText).toHaveBeenCalledWith(SECRET);
    expect(await screen.findByRole("button", { name: "Copied" })).toBeDefined();

    await userEvent.click(screen.getByRole("button", { name: "I've saved it" }));
    expect(screen.queryByLabelText("New API key")).toBeNull();
    expect(document.body.innerHTML).not.toContain(SECRET);
  });

  it("revokes a key after confirmation", async () => {
    const api = stubKeysApi([apiKeyFixture()]);
    renderKeys();

    await userEvent.click(await screen.findByRole("button", { name: "Revoke Production server" }));
    const dialog = await screen.findByRole("dialog", { name: "Revoke API key" });
    expect(within(dialog).getByText(/stops working immediately/)).toBeDefined();
    await userEvent.click(within(dialog).getByRole("button", { name: "Revoke" }));

    expect(await screen.findByRole("heading", { name: "No API keys" })).toBeDefined();
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    expect(api.callsTo("DELETE /api/keys/key-1/")).toHaveLength(1);
  });
});
