import type { Application } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse, type RecordedRequest } from "../../test/fetch-stub";
import { applicationFixture, appUsageTotalsFixture, promptConfigFixture } from "../../test/fixtures";
import { currentPath, renderRoute } from "../../test/render-route";

const DETAIL = "GET /api/app/blog-writer/";

/** The app's API, remembering status changes and edits like the server. */
function stubAppApi(initial: Application = applicationFixture(), extra = {}) {
  let current = initial;
  return stubSignedInApi({
    [DETAIL]: () => jsonResponse(current),
    "GET /api/app/blog-writer/analytics/usage/?days=30": () =>
      jsonResponse(appUsageTotalsFixture(4321, 64.8)),
    "PATCH /api/app/blog-writer/update_status/": ({ body }: RecordedRequest) => {
      current = { ...current, ...(body as Partial<Application>) };
      return jsonResponse(current);
    },
    "PATCH /api/app/blog-writer/": ({ body }: RecordedRequest) => {
      current = { ...current, ...(body as Partial<Application>) };
      return jsonResponse(current);
    },
    ...extra,
  });
}

function renderDetail() {
  return renderRoute("/applications/blog-writer", { auth: createTestAuth("signed-in") });
}

function card(title: string): HTMLElement {
  const element = screen.getByRole("heading", { name: title }).closest("div.rounded-xl");
  if (!(element instanceof HTMLElement)) throw new Error(`no ${title} card`);
  return element;
}

describe("application detail", () => {
  it("says what callers get: production, or a running experiment and its split", async () => {
    stubAppApi(applicationFixture({ status: "live" }), {
      "GET /api/app/blog-writer/prompt/": () => jsonResponse(promptConfigFixture({ production_version: 2 })),
      "GET /api/prompts/prompt-1/serving": () =>
        jsonResponse({
          production_version: 2,
          experiment: {
            id: "exp-1",
            app_kind: "prompt",
            prompt_id: "prompt-1",
            workflow_id: null,
            status: "running",
            arms: [
              { version: 1, percent: 50 },
              { version: 2, percent: 50 },
            ],
            sticky_by: null,
            rules: { min_calls: 100 },
            control_version: 2,
            started_by_name: "ada",
            started_at: "2024-05-03T10:00:00.000Z",
            ended_at: null,
            outcome: null,
            winner_version: null,
            end_reason: "",
            rollout: null,
          },
        }),
    });
    renderDetail();

    const line = await screen.findByRole("region", { name: "What callers get" });
    expect(
      await within(line).findByText("Experiment running: v1 50% · v2 50% — callers are split"),
    ).toBeDefined();
    expect(line.textContent).toContain("Production is v2");
    expect(within(line).getByRole("link", { name: "Versions" }).getAttribute("href")).toBe(
      "/prompts/blog-writer/versions",
    );
  });

  it("shows a spinner, then the header with its badges", async () => {
    stubAppApi();
    renderDetail();

    expect(screen.getByText("Loading application...")).toBeDefined();
    expect(await screen.findByRole("heading", { name: "Blog Writer", level: 1 })).toBeDefined();
    expect(screen.getByText("/blog-writer")).toBeDefined();
    expect(screen.getByText("Writes blog posts about any topic.")).toBeDefined();
    expect(screen.getByText("prompt")).toBeDefined();
    expect(screen.getAllByText("draft")[0]?.className).toContain("yellow");
    expect(screen.getByText("private")).toBeDefined();
  });

  it("says 'Application not found' with a way back to the list for a missing (or another user's) app", async () => {
    stubSignedInApi({
      [DETAIL]: () => jsonResponse({ code: "not_found", message: "Application not found", status: 404 }, 404),
    });
    renderDetail();

    expect(await screen.findByRole("heading", { name: "Application not found" })).toBeDefined();
    expect(screen.getByRole("link", { name: "Back to Applications" }).getAttribute("href")).toBe(
      "/applications",
    );
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("shows the server's message when loading fails otherwise", async () => {
    stubSignedInApi({
      [DETAIL]: () =>
        jsonResponse({ code: "internal_error", message: "Database unavailable", status: 503 }, 503),
    });
    renderDetail();

    const alert = await screen.findByRole("alert", {}, { timeout: 5000 });
    expect(within(alert).getByText("Error")).toBeDefined();
    expect(within(alert).getByText("Database unavailable")).toBeDefined();
  });

  it("shows the completion endpoint of a prompt app with a Test API link", async () => {
    stubAppApi();
    renderDetail();

    const endpoint = within(await waitFor(() => card("API Endpoint")));
    expect(endpoint.getByText("/api/app/blog-writer/completion-messages")).toBeDefined();
    expect(endpoint.getByText("POST")).toBeDefined();
    expect(endpoint.getByRole("link", { name: "Test API" }).getAttribute("href")).toBe(
      "/api-test?app=blog-writer",
    );
    expect(endpoint.getByRole("link", { name: "Plans & Billing" }).getAttribute("href")).toBe(
      "/applications/blog-writer/billing",
    );
  });

  it("shows chat-messages for a workflow app", async () => {
    stubAppApi(applicationFixture({ type: "workflow" }));
    renderDetail();

    expect(await screen.findByText("/api/app/blog-writer/chat-messages")).toBeDefined();
  });

  it("disables the current status and sets another one", async () => {
    const api = stubAppApi();
    renderDetail();

    const status = within(await waitFor(() => card("Status Management")));
    expect((status.getByRole("button", { name: "Set as Draft" }) as HTMLButtonElement).disabled).toBe(true);
    expect((status.getByRole("button", { name: "Archive" }) as HTMLButtonElement).disabled).toBe(false);

    await userEvent.click(status.getByRole("button", { name: "Set as Live" }));

    await waitFor(() =>
      expect((status.getByRole("button", { name: "Set as Live" }) as HTMLButtonElement).disabled).toBe(true),
    );
    expect((status.getByRole("button", { name: "Set as Draft" }) as HTMLButtonElement).disabled).toBe(false);
    expect(api.callsTo("PATCH /api/app/blog-writer/update_status/")[0]?.body).toEqual({ status: "live" });
  });

  it("shows the eval gate's refusal of Set as Live once, with a link to the Evals page", async () => {
    const gate =
      'Version v2 has no passing eval run, and this app requires one before it goes live: run the evals on v2 first (/prompts/blog-writer/evals), or turn off "Require a passing eval run before production" there';
    stubAppApi(applicationFixture(), {
      "PATCH /api/app/blog-writer/update_status/": () =>
        jsonResponse({ code: "conflict", message: gate, status: 409 }, 409),
    });
    const { router } = renderDetail();

    const status = within(await waitFor(() => card("Status Management")));
    await userEvent.click(status.getByRole("button", { name: "Set as Live" }));

    const alert = await status.findByRole("alert");
    expect(alert.textContent).toBe(gate);
    expect(screen.getAllByText(/has no passing eval run/)).toHaveLength(1);
    await userEvent.click(within(alert).getByRole("link", { name: "/prompts/blog-writer/evals" }));
    await waitFor(() => expect(router.state.location.pathname).toBe("/prompts/blog-writer/evals"));
  });

  it("asks before deleting, then deletes and goes to /applications", async () => {
    const api = stubAppApi(applicationFixture(), {
      "DELETE /api/app/blog-writer/": () => new Response(null, { status: 204 }),
      "GET /api/app/": () => jsonResponse([]),
    });
    const { router } = renderDetail();

    await userEvent.click(await screen.findByRole("button", { name: "Delete Application" }));
    const dialog = await screen.findByRole("dialog", { name: "Delete Application" });
    expect(
      within(dialog).getByText(
        "Are you sure you want to delete this application? This action cannot be undone.",
      ),
    ).toBeDefined();

    await userEvent.click(within(dialog).getByRole("button", { name: "Cancel" }));
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(api.callsTo("DELETE /api/app/blog-writer/")).toHaveLength(0);

    await userEvent.click(screen.getByRole("button", { name: "Delete Application" }));
    await userEvent.click(within(await screen.findByRole("dialog")).getByRole("button", { name: "Delete" }));

    await waitFor(() => expect(currentPath(router)).toBe("/applications"));
    expect(api.callsTo("DELETE /api/app/blog-writer/")).toHaveLength(1);
  });

  it("downloads the app with the signed-in token, shows 'Downloading...' and saves the server's file name", async () => {
    let finish: (response: Response) => void = () => undefined;
    const api = stubAppApi(applicationFixture(), {
      "GET /api/app/blog-writer/download-frontend?type=completion": () =>
        new Promise<Response>((resolve) => {
          finish = resolve;
        }),
    });
    vi.stubGlobal(
      "URL",
      Object.assign(URL, { createObjectURL: vi.fn(() => "blob:zip"), revokeObjectURL: vi.fn() }),
    );
    const click = vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(() => undefined);
    window.localStorage.setItem("token", "session-token");
    renderDetail();

    await userEvent.click(await screen.findByRole("button", { name: "Download App" }));
    expect(screen.getByRole("button", { name: "Downloading..." })).toBeDefined();
    finish(
      new Response(new Blob(["zip"]), {
        headers: { "Content-Disposition": 'attachment; filename="blog-writer-completion-app.zip"' },
      }),
    );

    await waitFor(() => expect(click).toHaveBeenCalled());
    expect((click.mock.contexts[0] as HTMLAnchorElement).download).toBe("blog-writer-completion-app.zip");
    const [request] = api.callsTo("GET /api/app/blog-writer/download-frontend?type=completion");
    expect(request?.headers.get("Authorization")).toBe("Bearer session-token");
    expect(await screen.findByRole("button", { name: "Download App" })).toBeDefined();
  });

  it("says 'Failed to download app. Please try again.' when the download fails", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => undefined);
    stubAppApi(applicationFixture(), {
      "GET /api/app/blog-writer/download-frontend?type=completion": () =>
        jsonResponse({ code: "not_found", message: "Application not found", status: 404 }, 404),
    });
    renderDetail();

    await userEvent.click(await screen.findByRole("button", { name: "Download App" }));

    expect(await screen.findByText("Failed to download app. Please try again.")).toBeDefined();
    expect(screen.getByRole("button", { name: "Download App" })).toBeDefined();
  });

  it("duplicates the app and opens the copy", async () => {
    const api = stubAppApi(applicationFixture(), {
      "POST /api/app/blog-writer/duplicate/": () =>
        jsonResponse(applicationFixture({ slug: "blog-writer-copy", name: "Blog Writer (copy)" }), 201),
      "GET /api/app/blog-writer-copy/": () =>
        jsonResponse(applicationFixture({ slug: "blog-writer-copy", name: "Blog Writer (copy)" })),
      "GET /api/app/blog-writer-copy/analytics/usage/?days=30": () =>
        jsonResponse(appUsageTotalsFixture(0, 0)),
    });
    const { router } = renderDetail();

    await userEvent.click(await screen.findByRole("button", { name: "Duplicate" }));

    await waitFor(() => expect(currentPath(router)).toBe("/applications/blog-writer-copy"));
    expect(await screen.findByRole("heading", { name: "Blog Writer (copy)", level: 1 })).toBeDefined();
    expect(api.callsTo("POST /api/app/blog-writer/duplicate/")).toHaveLength(1);
  });

  it("edits name, description, visibility and price, with 'Saving...' meanwhile", async () => {
    const api = stubAppApi();
    renderDetail();

    await userEvent.click(await screen.findByRole("button", { name: "Edit" }));
    const form = within(await waitFor(() => card("Edit Application")));
    const price = form.getByLabelText("Price per Call (cents)") as HTMLInputElement;
    expect(price.min).toBe("1");
    await userEvent.clear(form.getByLabelText("Name"));
    await userEvent.type(form.getByLabelText("Name"), "Post Writer");
    await userEvent.selectOptions(form.getByLabelText("Visibility"), "embed");
    await userEvent.clear(price);
    await userEvent.type(price, "75");
    // Typed in cents: the dollars it means are said under the field as it is typed.
    expect(form.getByText(/^= \$0\.75 per call\. A lower price applies at once/)).toBeDefined();
    await userEvent.click(form.getByRole("button", { name: "Save Changes" }));

    expect(await screen.findByRole("heading", { name: "Post Writer", level: 1 })).toBeDefined();
    expect(api.callsTo("PATCH /api/app/blog-writer/")[0]?.body).toEqual({
      name: "Post Writer",
      description: "Writes blog posts about any topic.",
      visibility: "embed",
      price_cents: 75,
    });
    expect(screen.queryByRole("heading", { name: "Edit Application" })).toBeNull();
  });

  it("says a price of 0 is too low at the field, without asking the server", async () => {
    const api = stubAppApi();
    renderDetail();

    await userEvent.click(await screen.findByRole("button", { name: "Edit" }));
    const form = within(await waitFor(() => card("Edit Application")));
    await userEvent.clear(form.getByLabelText("Price per Call (cents)"));
    await userEvent.type(form.getByLabelText("Price per Call (cents)"), "0");
    await userEvent.click(form.getByRole("button", { name: "Save Changes" }));

    expect(await form.findByText("Must be at least 1 cent")).toBeDefined();
    expect(form.queryByRole("alert")).toBeNull();
    expect(api.callsTo("PATCH /api/app/blog-writer/")).toHaveLength(0);
  });

  it("shows the server's field errors at their fields, not its raw summary above the form", async () => {
    stubAppApi(applicationFixture(), {
      "PATCH /api/app/blog-writer/": () =>
        jsonResponse(
          {
            code: "bad_request",
            message: "Invalid request: price_cents At least 7 cents ($0.07): the worst case of gpt4…",
            fields: { price_cents: "At least 7 cents ($0.07): the worst case of gpt4…" },
          },
          400,
        ),
    });
    renderDetail();

    await userEvent.click(await screen.findByRole("button", { name: "Edit" }));
    const form = within(await waitFor(() => card("Edit Application")));
    await userEvent.click(form.getByRole("button", { name: "Save Changes" }));

    expect(await form.findByText("At least 7 cents ($0.07): the worst case of gpt4…")).toBeDefined();
    expect(form.queryByText(/Invalid request: price_cents/)).toBeNull();
  });

  it("edits the announced price, shows when it applies, and keeps it when other fields are saved", async () => {
    const at = "2026-03-08T12:00:00.000Z";
    const api = stubAppApi(
      applicationFixture({ price_cents: 150, pending_price_cents: 400, pending_price_at: at }),
    );
    renderDetail();

    const when = new Date(at).toLocaleString();
    const details = within(await waitFor(() => card("Details")));
    expect(details.getByText("$1.50")).toBeDefined();
    expect(details.getByText(`Rises to $4.00 on ${when}`)).toBeDefined();
    await userEvent.click(screen.getByRole("button", { name: "Edit" }));
    const form = within(await waitFor(() => card("Edit Application")));
    expect((form.getByLabelText("Price per Call (cents)") as HTMLInputElement).value).toBe("400");
    expect(
      form.getByText(`= $4.00 per call. Rises to $4.00 per call on ${when}; callers pay $1.50 until then.`),
    ).toBeDefined();
    await userEvent.type(form.getByLabelText("Name"), " 2");
    await userEvent.click(form.getByRole("button", { name: "Save Changes" }));

    await waitFor(() => expect(api.callsTo("PATCH /api/app/blog-writer/")).toHaveLength(1));
    expect(api.callsTo("PATCH /api/app/blog-writer/")[0]?.body).toMatchObject({ price_cents: 400 });
  });

  it("shows usage and details in the side column", async () => {
    stubAppApi();
    renderDetail();

    const analytics = within(await waitFor(() => card("Analytics")));
    await waitFor(() => expect(analytics.getByText("4,321")).toBeDefined());
    expect(analytics.getByText("Last 30 days")).toBeDefined();
    const money = within(analytics.getByLabelText("Money, Last 30 days"));
    expect(money.getByText("Gross").nextSibling?.textContent).toBe("$64.80");
    expect(money.getByText("Platform fee").nextSibling?.textContent).toBe("-$6.48");
    expect(money.getByText("Model cost").nextSibling?.textContent).toBe("$0.00");
    expect(money.getByText("Net").nextSibling?.textContent).toBe("$58.32");
    expect(analytics.getByRole("link", { name: "View Detailed Analytics" }).getAttribute("href")).toBe(
      "/applications/blog-writer/analytics",
    );
    const details = within(card("Details"));
    expect(details.getByText("$1.50")).toBeDefined();
    expect(details.getByText("Ada L.")).toBeDefined();
    expect(details.getByText(new Date("2024-05-01T10:00:00.000Z").toLocaleDateString())).toBeDefined();
  });
});
