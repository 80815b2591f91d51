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
    "PATCH /api/keys/key-1/": ({ body }: RecordedRequest) => {
      const changes = body as Partial<ApiKey>;
      if (changes.allowed_apps?.includes("nope"))
        return jsonResponse(
          {
            code: "bad_request",
            message: "Invalid request",
            fields: { allowed_apps: "names an unknown app: nope" },
          },
          400,
        );
      keys = keys.map((key) => (key.id === "key-1" ? { ...key, ...changes } : key));
      return jsonResponse(keys.find((key) => key.id === "key-1"));
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
    expect(api.callsTo("POST /api/keys/")[0]?.body).toEqual({
      name: "Laptop",
      spend_limit_cents: null,
      limit_reset: "monthly",
      expires_at: null,
      allowed_apps: [],
    });
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

  it("shows each key's spend against its limit, its expiry and its apps", async () => {
    stubKeysApi([
      apiKeyFixture({
        spend_limit_cents: 500,
        limit_reset: "daily",
        spent_micros: 1_200_000,
        period_resets_at: "2099-01-02T00:00:00.000Z",
        expires_at: "2099-03-01T00:00:00.000Z",
        allowed_apps: ["summarizer", "translator"],
      }),
      apiKeyFixture({ id: "key-2", name: "CI" }),
    ]);
    renderKeys();

    const row = (await screen.findByRole("rowheader", { name: "Production server" })).closest(
      "tr",
    ) as HTMLElement;
    expect(within(row).getByText("$1.20 of $5.00 today, resets 00:00 UTC")).toBeDefined();
    const bar = within(row).getByRole("progressbar", { name: "Spend of Production server" });
    expect(bar.getAttribute("aria-valuenow")).toBe("1200000");
    expect(within(row).getByText("1 Mar 2099, 00:00 UTC")).toBeDefined();
    expect(within(row).getByText("summarizer, translator")).toBeDefined();
    const ci = screen.getByRole("rowheader", { name: "CI" }).closest("tr") as HTMLElement;
    expect(within(ci).getByText("No limit")).toBeDefined();
    expect(within(ci).getByText("All apps")).toBeDefined();
    expect(within(ci).getByText("No expiry")).toBeDefined();
  });

  it("creates a key with a limit, an expiry and allowed apps", async () => {
    const api = stubKeysApi();
    renderKeys();

    await userEvent.type(await screen.findByLabelText("Key Name"), "Agent");
    await userEvent.type(screen.getByLabelText("Spend limit ($)"), "abc");
    await userEvent.click(screen.getByRole("button", { name: "Create Key" }));
    expect(await screen.findByText("Enter an amount in dollars, e.g. 5.00")).toBeDefined();
    expect(api.callsTo("POST /api/keys/")).toHaveLength(0);

    await userEvent.clear(screen.getByLabelText("Spend limit ($)"));
    await userEvent.type(screen.getByLabelText("Spend limit ($)"), "5");
    await userEvent.selectOptions(screen.getByLabelText("Limit resets"), "daily");
    await userEvent.type(screen.getByLabelText("Expires on"), "2099-03-01");
    await userEvent.type(screen.getByLabelText("Allowed apps"), "summarizer, translator");
    await userEvent.click(screen.getByRole("button", { name: "Create Key" }));

    expect(await screen.findByLabelText("New API key")).toBeDefined();
    expect(api.callsTo("POST /api/keys/")[0]?.body).toEqual({
      name: "Agent",
      spend_limit_cents: 500,
      limit_reset: "daily",
      expires_at: "2099-03-01T00:00:00.000Z",
      allowed_apps: ["summarizer", "translator"],
    });
  });

  it("edits a key's options from the keyboard, showing the server's field errors", async () => {
    const api = stubKeysApi([apiKeyFixture()]);
    renderKeys();

    await userEvent.click(await screen.findByRole("button", { name: "Edit Production server" }));
    const dialog = await screen.findByRole("dialog", { name: "Edit Production server" });
    await userEvent.type(within(dialog).getByLabelText("Spend limit ($)"), "2.50");
    await userEvent.type(within(dialog).getByLabelText("Allowed apps"), "nope{Enter}");
    expect(await within(dialog).findByText("names an unknown app: nope")).toBeDefined();

    await userEvent.clear(within(dialog).getByLabelText("Allowed apps"));
    await userEvent.type(within(dialog).getByLabelText("Allowed apps"), "{Enter}");
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    // Only what changed is sent.
    expect(api.callsTo("PATCH /api/keys/key-1/").at(-1)?.body).toEqual({ spend_limit_cents: 250 });
  });
});
