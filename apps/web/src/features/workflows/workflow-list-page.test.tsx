import { screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse, stubFetch } from "../../test/fetch-stub";
import { applicationFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";
import { WorkflowListPage } from "./workflow-list-page";

const apps = [
  applicationFixture({ slug: "blog-writer", name: "Blog Writer" }),
  applicationFixture({
    slug: "support-flow",
    name: "Support Flow",
    type: "workflow",
    description: "Answers support tickets with our n8n flow.",
    visibility: "public",
    status: "live",
    price_cents: 250,
  }),
  applicationFixture({
    slug: "lead-scorer",
    name: "Lead Scorer",
    type: "workflow",
    description: "",
    visibility: "private",
    status: "draft",
    price_cents: 5,
  }),
];

function renderList(list = apps) {
  const api = stubSignedInApi({ "GET /api/app/": () => jsonResponse(list) });
  renderRoute("/workflows", { auth: createTestAuth("signed-in") });
  return api;
}

function cardOf(name: string): HTMLElement {
  const card = screen.getByRole("heading", { name }).closest("li");
  if (!card) throw new Error(`no card for ${name}`);
  return card;
}

function shownNames(): string[] {
  const list = screen.queryByRole("list", { name: "Workflows" });
  if (!list) return [];
  return within(list)
    .getAllByRole("heading")
    .map((heading) => heading.textContent ?? "");
}

describe("workflow list", () => {
  it("shows only workflow apps, each with slug, badges, price per call and its links", async () => {
    renderList();

    expect(await screen.findByRole("heading", { name: "Support Flow" })).toBeDefined();
    expect(shownNames()).toEqual(["Support Flow", "Lead Scorer"]);
    const card = within(cardOf("Support Flow"));
    expect(card.getByText("/support-flow")).toBeDefined();
    expect(card.getByText("Answers support tickets with our n8n flow.")).toBeDefined();
    expect(card.getByText("public")).toBeDefined();
    expect(card.getByText("live").className).toContain("green");
    expect(card.getByText("$2.50/call")).toBeDefined();
    expect(card.getByRole("link", { name: "Manage Support Flow" }).getAttribute("href")).toBe(
      "/workflows/support-flow",
    );
    expect(card.getByRole("link", { name: "Analytics Support Flow" }).getAttribute("href")).toBe(
      "/applications/support-flow/analytics",
    );
    expect(within(cardOf("Lead Scorer")).getByText("$0.05/call")).toBeDefined();
    expect(screen.getAllByRole("link", { name: "Create New Workflow" })[0]?.getAttribute("href")).toBe(
      "/applications/create?type=workflow",
    );
  });

  it("filters by visibility and status on the client", async () => {
    const user = userEvent.setup();
    const api = renderList();
    await screen.findByRole("heading", { name: "Support Flow" });

    expect(screen.getByRole("option", { name: "All Visibility" })).toBeDefined();
    // Filtering asks the server nothing: the list already loaded is filtered on the page.
    const loads = api.callsTo("GET /api/app/").length;
    await user.selectOptions(screen.getByLabelText("Visibility"), "Private");
    expect(shownNames()).toEqual(["Lead Scorer"]);

    await user.selectOptions(screen.getByLabelText("Status"), "Live");
    expect(shownNames()).toEqual([]);
    expect(screen.getByText("No workflows match these filters.")).toBeDefined();

    await user.selectOptions(screen.getByLabelText("Visibility"), "All Visibility");
    expect(shownNames()).toEqual(["Support Flow"]);
    await user.selectOptions(screen.getByLabelText("Status"), "Archived");
    expect(shownNames()).toEqual([]);
    expect(api.callsTo("GET /api/app/")).toHaveLength(loads);
  });

  it("says 'No workflows' when there are none", async () => {
    renderList([apps[0] ?? applicationFixture()]);

    expect(await screen.findByRole("heading", { name: "No workflows" })).toBeDefined();
    expect(screen.getByText("Get started by creating your first workflow application.")).toBeDefined();
  });

  it("shows a spinner, then the server's message when the list cannot be loaded", async () => {
    stubSignedInApi({ "GET /api/app/": () => jsonResponse({ message: "Database unavailable" }, 503) });
    renderRoute("/workflows", { auth: createTestAuth("signed-in") });

    expect(screen.getByRole("status").textContent).toContain("Loading workflows...");
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("Error");
    expect(alert.textContent).toContain("Database unavailable");
  });

  it("asks a signed-out visitor to log in, without loading anything", () => {
    const api = stubFetch({});
    renderRoute("/workflows", { routes: [{ path: "/workflows", element: <WorkflowListPage /> }] });

    expect(screen.getByText("Please log in to view workflows.")).toBeDefined();
    expect(api.requests).toHaveLength(0);
  });
});
