import type { WebhookDelivery, WebhookEndpoint } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse, type RecordedRequest } from "../../test/fetch-stub";
import { renderRoute } from "../../test/render-route";

const SECRET = "whsec_c2VjcmV0LXNpZ25pbmcta2V5LWZvci10ZXN0cw==";
const ROTATED = "whsec_bmV3LXNpZ25pbmcta2V5LWFmdGVyLXJvdGF0aW9u";
const DELIVERIES = "GET /api/webhooks/endpoints/ep-1/deliveries/?limit=50";

function endpointFixture(overrides: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  return {
    id: "ep-1",
    url: "https://hooks.example.com/promptmint",
    description: "Billing service",
    event_types: ["call.charged", "payout.paid"],
    enabled: true,
    disabled_reason: null,
    failing_since: null,
    created_at: "2026-11-01T10:00:00.000Z",
    updated_at: "2026-11-01T10:00:00.000Z",
    ...overrides,
  };
}

function deliveryFixture(overrides: Partial<WebhookDelivery> = {}): WebhookDelivery {
  return {
    id: "del-1",
    endpoint_id: "ep-1",
    event_id: "evt_123",
    event_type: "call.charged",
    status: "failed",
    attempts: 1,
    next_attempt_at: null,
    delivered_at: null,
    created_at: "2026-11-02T10:00:00.000Z",
    payload: { id: "evt_123", type: "call.charged", data: { amount_micros: 1200 } },
    attempt_log: [
      {
        attempt: 1,
        status_code: 500,
        error: null,
        response_body: "receiver down",
        duration_ms: 12,
        created_at: "2026-11-02T10:00:00.000Z",
      },
    ],
    ...overrides,
  };
}

const delivered = (delivery: WebhookDelivery): WebhookDelivery => ({
  ...delivery,
  status: "delivered",
  attempts: delivery.attempts + 1,
  delivered_at: "2026-11-02T10:05:00.000Z",
  attempt_log: [
    {
      attempt: delivery.attempts + 1,
      status_code: 200,
      error: null,
      response_body: "ok",
      duration_ms: 8,
      created_at: "2026-11-02T10:05:00.000Z",
    },
    ...delivery.attempt_log,
  ],
});

/** The webhooks API, keeping endpoints and deliveries like the server. */
function stubWebhooksApi(initial: WebhookEndpoint[] = [], initialDeliveries: WebhookDelivery[] = []) {
  let endpoints = initial;
  let deliveries = initialDeliveries;
  return stubSignedInApi({
    "GET /api/webhooks/event-types/": () =>
      jsonResponse([
        { type: "call.charged", description: "A call was answered and charged" },
        { type: "payout.paid", description: "A payout reached the creator's bank" },
      ]),
    "GET /api/webhooks/endpoints/": () => jsonResponse(endpoints),
    "POST /api/webhooks/endpoints/": ({ body }: RecordedRequest) => {
      const input = body as { url: string; description: string; event_types: string[] };
      if (input.url.startsWith("ftp:"))
        return jsonResponse(
          {
            code: "bad_request",
            message: "Invalid request",
            status: 400,
            fields: { url: "must be http or https" },
          },
          400,
        );
      const created = endpointFixture({ id: "ep-new", ...input });
      endpoints = [...endpoints, created];
      return jsonResponse({ ...created, secret: SECRET }, 201);
    },
    [DELIVERIES]: () => jsonResponse(deliveries),
    "GET /api/webhooks/endpoints/ep-new/deliveries/?limit=50": () => jsonResponse([]),
    "POST /api/webhooks/endpoints/ep-1/test/": () => {
      const sent = deliveryFixture({
        id: "del-test",
        event_id: "test_abc",
        event_type: "webhook.test",
        status: "pending",
        next_attempt_at: "2026-11-02T10:00:05.000Z",
        payload: { id: "test_abc", type: "webhook.test", data: { message: "A test event from Promptmint" } },
      });
      deliveries = [sent, ...deliveries];
      endpoints = endpoints.map((e) => ({ ...e, failing_since: "2026-11-02T10:00:00.000Z" }));
      return jsonResponse(sent);
    },
    "POST /api/webhooks/deliveries/del-1/redeliver/": () => {
      deliveries = deliveries.map((d) => (d.id === "del-1" ? delivered(d) : d));
      return jsonResponse(deliveries.find((d) => d.id === "del-1"));
    },
    "PATCH /api/webhooks/endpoints/ep-1/": ({ body }: RecordedRequest) => {
      const changes = body as Partial<WebhookEndpoint>;
      endpoints = endpoints.map((e) => ({
        ...e,
        ...changes,
        disabled_reason: changes.enabled === false ? "Disabled by its owner" : e.disabled_reason,
      }));
      return jsonResponse(endpoints[0]);
    },
    "DELETE /api/webhooks/endpoints/ep-1/": () => {
      endpoints = endpoints.filter((e) => e.id !== "ep-1");
      return new Response(null, { status: 204 });
    },
    "GET /api/webhooks/endpoints/ep-1/secret/": () => jsonResponse({ secret: SECRET }),
    "POST /api/webhooks/endpoints/ep-1/rotate-secret/": () => jsonResponse({ secret: ROTATED }),
  });
}

function renderWebhooks() {
  return renderRoute("/webhooks", { auth: createTestAuth("signed-in") });
}

describe("Webhooks", () => {
  it("invites to add a first endpoint", async () => {
    stubWebhooksApi();
    renderWebhooks();

    expect(await screen.findByRole("heading", { name: "No webhook endpoints" })).toBeDefined();
    expect(screen.getByRole("heading", { name: "Webhooks", level: 1 })).toBeDefined();
  });

  it("says why the endpoints could not be loaded", async () => {
    stubSignedInApi({
      "GET /api/webhooks/event-types/": () => jsonResponse([]),
      "GET /api/webhooks/endpoints/": () =>
        jsonResponse({ code: "internal", message: "The database is unavailable", status: 503 }, 503),
    });
    renderWebhooks();

    expect(await screen.findByText("The database is unavailable")).toBeDefined();
  });

  it("lists endpoints with their event types, state and failures, and the first one's deliveries", async () => {
    stubWebhooksApi(
      [
        endpointFixture({ failing_since: "2026-11-02T10:00:00.000Z" }),
        endpointFixture({
          id: "ep-2",
          url: "https://old.example.com/hook",
          description: "",
          event_types: ["*"],
          enabled: false,
          disabled_reason: "Every delivery failed for 5 days",
        }),
      ],
      [deliveryFixture()],
    );
    renderWebhooks();

    const first = (
      await screen.findByRole("heading", { name: "https://hooks.example.com/promptmint" })
    ).closest("li") as HTMLElement;
    expect(within(first).getByText("Billing service")).toBeDefined();
    expect(within(first).getByText("Enabled")).toBeDefined();
    const failing = new Date("2026-11-02T10:00:00.000Z").toLocaleString();
    expect(within(first).getByText(`Failing since ${failing}`)).toBeDefined();
    const types = within(first).getByRole("list", { name: "Event types of Billing service" });
    expect(
      within(types)
        .getAllByRole("listitem")
        .map((item) => item.textContent),
    ).toEqual(["call.charged", "payout.paid"]);
    const second = screen
      .getByRole("heading", { name: "https://old.example.com/hook" })
      .closest("li") as HTMLElement;
    expect(within(second).getByText("Disabled")).toBeDefined();
    expect(within(second).getByText("Every delivery failed for 5 days")).toBeDefined();
    expect(within(second).getByText("All events")).toBeDefined();

    const log = await screen.findByRole("button", { name: /call\.charged/, expanded: false });
    expect(within(log).getByText("Failed")).toBeDefined();
    expect(within(log).getByText("evt_123")).toBeDefined();
    expect(within(log).getByText("1 attempt")).toBeDefined();
  });

  it("adds an endpoint for chosen event types and shows its secret once, with Copy", async () => {
    const writeText = vi.fn(async () => undefined);
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    const api = stubWebhooksApi();
    renderWebhooks();

    await userEvent.click(
      await screen.findByRole("checkbox", { name: "All events (including types added later)" }),
    );
    await userEvent.click(screen.getByRole("button", { name: "Add Endpoint" }));
    expect(await screen.findByText("Endpoint URL is required")).toBeDefined();
    expect(screen.getByText("Choose at least one event type")).toBeDefined();

    await userEvent.type(screen.getByLabelText("Endpoint URL"), "https://hooks.example.com/new");
    await userEvent.type(screen.getByLabelText("Description (optional)"), "Ledger sync");
    await userEvent.click(screen.getByRole("checkbox", { name: "payout.paid" }));
    await userEvent.click(screen.getByRole("button", { name: "Add Endpoint" }));

    const secret = (await screen.findByLabelText("Signing secret")) as HTMLInputElement;
    expect(secret.value).toBe(SECRET);
    expect(api.callsTo("POST /api/webhooks/endpoints/")[0]?.body).toEqual({
      url: "https://hooks.example.com/new",
      description: "Ledger sync",
      event_types: ["payout.paid"],
    });
    expect(
      await screen.findByRole("heading", { name: "https://hooks.example.com/new", level: 3 }),
    ).toBeDefined();
    await userEvent.click(screen.getByRole("button", { name: "Copy" }));
    expect(writeText).toHaveBeenCalledWith(SECRET);

    await userEvent.click(screen.getByRole("button", { name: "I've saved it" }));
    expect(screen.queryByLabelText("Signing secret")).toBeNull();
    expect(document.body.innerHTML).not.toContain(SECRET);
  });

  it("shows the server's 400 next to the field it names", async () => {
    stubWebhooksApi();
    renderWebhooks();

    await userEvent.type(await screen.findByLabelText("Endpoint URL"), "ftp://files.example.com{Enter}");

    expect(await screen.findByText("must be http or https")).toBeDefined();
    const url = screen.getByLabelText("Endpoint URL");
    expect(url.getAttribute("aria-invalid")).toBe("true");
    expect(document.getElementById(url.getAttribute("aria-describedby") ?? "")?.textContent).toBe(
      "must be http or https",
    );
  });

  it("sends a test event and opens its delivery with the failed attempt", async () => {
    const api = stubWebhooksApi([endpointFixture()]);
    renderWebhooks();

    expect(await screen.findByRole("heading", { name: "No deliveries yet" })).toBeDefined();
    await userEvent.click(screen.getByRole("button", { name: "Send test event" }));

    const summary = await screen.findByRole("button", { name: /webhook\.test/, expanded: true });
    expect(within(summary).getByText("Retrying")).toBeDefined();
    const details = document.getElementById(summary.getAttribute("aria-controls") ?? "") as HTMLElement;
    expect(within(details).getByText("HTTP 500")).toBeDefined();
    expect(within(details).getByText("receiver down")).toBeDefined();
    expect(within(details).getByText(/"A test event from Promptmint"/)).toBeDefined();
    expect(api.callsTo("POST /api/webhooks/endpoints/ep-1/test/")).toHaveLength(1);
    expect(await screen.findByText(/^Failing since/)).toBeDefined();
  });

  it("redelivers a failed delivery and shows it delivered", async () => {
    const api = stubWebhooksApi([endpointFixture()], [deliveryFixture()]);
    renderWebhooks();

    await userEvent.click(await screen.findByRole("button", { name: /call\.charged/, expanded: false }));
    await userEvent.click(screen.getByRole("button", { name: "Redeliver call.charged evt_123" }));

    const summary = await screen.findByRole("button", { name: /Delivered/, expanded: true });
    expect(within(summary).getByText("2 attempts")).toBeDefined();
    const details = document.getElementById(summary.getAttribute("aria-controls") ?? "") as HTMLElement;
    expect(
      within(details)
        .getAllByText(/^HTTP /)
        .map((badge) => badge.textContent),
    ).toEqual(["HTTP 200", "HTTP 500"]);
    expect(api.callsTo("POST /api/webhooks/deliveries/del-1/redeliver/")).toHaveLength(1);
  });

  it("disables an endpoint and deletes it after confirmation", async () => {
    const api = stubWebhooksApi([endpointFixture()]);
    renderWebhooks();

    await userEvent.click(await screen.findByRole("button", { name: "Disable" }));
    expect(await screen.findByText("Disabled by its owner")).toBeDefined();
    expect(api.callsTo("PATCH /api/webhooks/endpoints/ep-1/")[0]?.body).toEqual({ enabled: false });

    await userEvent.click(screen.getByRole("button", { name: "Delete Billing service" }));
    const dialog = await screen.findByRole("dialog", { name: "Delete endpoint" });
    await userEvent.click(within(dialog).getByRole("button", { name: "Delete" }));
    expect(await screen.findByRole("heading", { name: "No webhook endpoints" })).toBeDefined();
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
  });

  it("reveals an endpoint's signing secret", async () => {
    stubWebhooksApi([endpointFixture()]);
    renderWebhooks();

    await userEvent.click(await screen.findByRole("button", { name: "Signing secret" }));
    const dialog = await screen.findByRole("dialog", { name: "Signing secret" });
    expect(((await within(dialog).findByLabelText("Signing secret")) as HTMLInputElement).value).toBe(SECRET);
  });

  it("edits an endpoint's event types from the keyboard, sending only what changed", async () => {
    const api = stubWebhooksApi([endpointFixture()]);
    renderWebhooks();

    await userEvent.click(await screen.findByRole("button", { name: "Edit Billing service" }));
    const dialog = await screen.findByRole("dialog", { name: "Edit endpoint" });
    expect((within(dialog).getByRole("checkbox", { name: "call.charged" }) as HTMLInputElement).checked).toBe(
      true,
    );
    await userEvent.click(within(dialog).getByRole("checkbox", { name: "call.charged" }));
    await userEvent.type(within(dialog).getByLabelText("Endpoint URL"), "{Enter}");

    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    expect(api.callsTo("PATCH /api/webhooks/endpoints/ep-1/")[0]?.body).toEqual({
      event_types: ["payout.paid"],
    });
  });

  it("rotates the signing secret and shows the new one", async () => {
    const api = stubWebhooksApi([endpointFixture()]);
    renderWebhooks();

    await userEvent.click(await screen.findByRole("button", { name: "Signing secret" }));
    const dialog = await screen.findByRole("dialog", { name: "Signing secret" });
    await within(dialog).findByDisplayValue(SECRET);
    await userEvent.selectOptions(within(dialog).getByLabelText("Old secret keeps signing for"), "1");
    await userEvent.click(within(dialog).getByRole("button", { name: "Rotate secret" }));

    expect(await within(dialog).findByDisplayValue(ROTATED)).toBeDefined();
    expect(within(dialog).getByText(/Update your receiver before the old one stops/)).toBeDefined();
    expect(api.callsTo("POST /api/webhooks/endpoints/ep-1/rotate-secret/")[0]?.body).toEqual({
      grace_hours: 1,
    });
  });
});
