import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse } from "../../test/fetch-stub";
import { applicationFixture, appUsageTotalsFixture, moneyFiguresFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";

const apps = [
  applicationFixture({ slug: "blog-writer", name: "Blog Writer", status: "live" }),
  applicationFixture({
    slug: "support-bot",
    name: "Support Bot",
    type: "workflow",
    status: "draft",
    interaction_mode: "chat",
  }),
  applicationFixture({ slug: "old-thing", name: "Old Thing", status: "archived", interaction_mode: "chat" }),
];

function usage(total_invocations: number, total_revenue: number) {
  return () => jsonResponse(appUsageTotalsFixture(total_invocations, total_revenue));
}

function stubDashboardApi(extra = {}) {
  return stubSignedInApi({
    "GET /api/app/": () => jsonResponse(apps),
    "GET /api/app/blog-writer/analytics/usage/?days=30": usage(1200, 18.5),
    "GET /api/app/support-bot/analytics/usage/?days=30": usage(34, 0.51),
    "GET /api/app/old-thing/analytics/usage/?days=30": () => jsonResponse({ message: "boom" }, 500),
    // The apps' figures summed, as the server sums the same rollups.
    "GET /api/analytics/figures/?days=30": () =>
      jsonResponse(moneyFiguresFixture({ gross_micros: 18_500_000 + 510_000 })),
    ...extra,
  });
}

function rowOf(name: string): HTMLElement {
  const row = screen.getByRole("rowheader", { name }).closest("tr");
  if (!row) throw new Error(`no row for ${name}`);
  return row;
}

describe("dashboard", () => {
  afterEach(() => vi.restoreAllMocks());

  it("sums applications and invocations, shows gross, fee, model cost and net, and 0 for usage that failed to load", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    stubDashboardApi();
    renderRoute("/dashboard", { auth: createTestAuth("signed-in") });

    const summary = await screen.findByRole("region", { name: "Summary" });
    await waitFor(() => expect(within(summary).getByText("1,234")).toBeDefined());
    expect(within(summary).getByText("Total Applications").nextSibling?.textContent).toBe("3");
    expect(document.title).toBe("Dashboard · Promptmint");
    // The invocations are the window's, and say so.
    expect(within(summary).getByText("Total Invocations").parentElement?.textContent).toContain(
      "Last 30 days",
    );
    await waitFor(() =>
      expect(within(summary).getByText("Net Earnings").nextSibling?.textContent).toBe("$17.11"),
    );
    expect(within(summary).getByTitle("Exactly $17.109")).toBeDefined();
    expect(within(summary).getAllByText("Last 30 days")).toHaveLength(2);
    // Side by side, for the period, to the cent (the exact figure on hover).
    const money = within(screen.getByLabelText("Earnings, Last 30 days"));
    expect(money.getByText("Gross").nextSibling?.textContent).toBe("$19.01");
    expect(money.getByText("Platform fee").nextSibling?.textContent).toBe("-$1.90");
    expect(money.getByText("Model cost").nextSibling?.textContent).toBe("$0.00");
    expect(money.getByText("Net").nextSibling?.textContent).toBe("$17.11");

    // Each row's net, from the same figures: the rows add up to the total (exactly, on hover).
    const blog = within(rowOf("Blog Writer"));
    expect(blog.getByText("blog-writer")).toBeDefined();
    expect(blog.getByText("1,200")).toBeDefined();
    expect(blog.getByText("$16.65")).toBeDefined();
    expect(within(rowOf("Support Bot")).getByText("$0.46").title).toBe("Exactly $0.459");
    expect(screen.getByRole("columnheader", { name: "Net, last 30 days" })).toBeDefined();
    const old = within(rowOf("Old Thing"));
    expect(old.getByText("0")).toBeDefined();
    expect(old.getByText("$0.00")).toBeDefined();
    expect(warn).toHaveBeenCalled();
  });

  it("colours live green, draft yellow and any other status grey", async () => {
    stubDashboardApi({ "GET /api/app/old-thing/analytics/usage/?days=30": usage(0, 0) });
    renderRoute("/applications", { auth: createTestAuth("signed-in") });

    await screen.findByRole("rowheader", { name: "Blog Writer" });
    expect(within(rowOf("Blog Writer")).getByText("live").className).toContain("green");
    expect(within(rowOf("Support Bot")).getByText("draft").className).toContain("yellow");
    expect(within(rowOf("Old Thing")).getByText("archived").className).toContain("slate");
  });

  it("links each type's row actions as SPEC says", async () => {
    stubDashboardApi({ "GET /api/app/old-thing/analytics/usage/?days=30": usage(0, 0) });
    renderRoute("/dashboard", { auth: createTestAuth("signed-in") });

    await screen.findByRole("rowheader", { name: "Blog Writer" });
    const blog = within(rowOf("Blog Writer"));
    expect(blog.getByRole("link", { name: "Manage Blog Writer" }).getAttribute("href")).toBe(
      "/prompts/blog-writer",
    );
    expect(blog.getByRole("link", { name: "Analytics of Blog Writer" }).getAttribute("href")).toBe(
      "/applications/blog-writer/analytics",
    );
    expect(blog.getByRole("button", { name: "Download" })).toBeDefined();
    expect(
      within(rowOf("Support Bot")).getByRole("link", { name: "Manage Support Bot" }).getAttribute("href"),
    ).toBe("/workflows/support-bot");

    for (const [name, href] of [
      ["Global Analytics", "/analytics"],
      ["Manage Prompts", "/prompts"],
      ["Manage Workflows", "/workflows"],
    ]) {
      expect(screen.getByRole("link", { name }).getAttribute("href")).toBe(href);
    }
    expect(screen.getAllByRole("link", { name: "Create Application" })[0]?.getAttribute("href")).toBe(
      "/applications/create",
    );
  });

  it("downloads a chat-mode prompt app as '{slug}-chat-app.zip' and shows 'Downloading...' meanwhile", async () => {
    let finish: (response: Response) => void = () => undefined;
    const api = stubDashboardApi({
      "GET /api/app/old-thing/analytics/usage/?days=30": usage(0, 0),
      "GET /api/app/old-thing/download-frontend?type=chat": () =>
        new Promise<Response>((resolve) => {
          finish = resolve;
        }),
    });
    const createObjectURL = vi.fn(() => "blob:zip");
    vi.stubGlobal("URL", Object.assign(URL, { createObjectURL, revokeObjectURL: vi.fn() }));
    const click = vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(() => undefined);
    renderRoute("/dashboard", { auth: createTestAuth("signed-in") });

    await screen.findByRole("rowheader", { name: "Old Thing" });
    await userEvent.click(within(rowOf("Old Thing")).getByRole("button", { name: "Download" }));
    expect(within(rowOf("Old Thing")).getByRole("button", { name: "Downloading..." })).toBeDefined();

    finish(new Response(new Blob(["zip"]), { status: 200 }));
    await waitFor(() => expect(click).toHaveBeenCalled());
    const link = click.mock.contexts[0] as HTMLAnchorElement;
    expect(link.download).toBe("old-thing-chat-app.zip");
    expect(api.callsTo("GET /api/app/old-thing/download-frontend?type=chat")).toHaveLength(1);
    expect(await within(rowOf("Old Thing")).findByRole("button", { name: "Download" })).toBeDefined();
  });

  it("says so when a download fails", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => undefined);
    stubDashboardApi({
      "GET /api/app/old-thing/analytics/usage/?days=30": usage(0, 0),
      "GET /api/app/support-bot/download-frontend?type=completion": () =>
        jsonResponse({ code: "not_found", message: "Not found", status: 404 }, 404),
    });
    renderRoute("/dashboard", { auth: createTestAuth("signed-in") });

    await screen.findByRole("rowheader", { name: "Support Bot" });
    await userEvent.click(within(rowOf("Support Bot")).getByRole("button", { name: "Download" }));

    expect(await screen.findByText("Failed to download app. Please try again.")).toBeDefined();
  });

  it("on a phone, shows each application as a card with its figures, badges and row actions", async () => {
    stubDashboardApi({ "GET /api/app/old-thing/analytics/usage/?days=30": usage(0, 0) });
    renderRoute("/dashboard", { auth: createTestAuth("signed-in") });

    // Both layouts are in the DOM; CSS shows the card list below md and the table from md.
    const cards = await screen.findByRole("list", { name: "Applications" });
    expect(cards.className).toContain("md:hidden");
    expect(screen.getByRole("table").closest(".md\\:block")).not.toBeNull();
    await waitFor(() =>
      expect(
        within(within(cards).getByRole("listitem", { name: "Blog Writer" })).getByText("1,200"),
      ).toBeDefined(),
    );
    const blog = within(within(cards).getByRole("listitem", { name: "Blog Writer" }));
    expect(blog.getByText("blog-writer")).toBeDefined();
    expect(blog.getByText("prompt")).toBeDefined();
    expect(blog.getByText("live").className).toContain("green");
    expect(blog.getByText("Invocations").nextSibling?.textContent).toBe("1,200");
    expect(blog.getByText("Net, last 30 days").nextSibling?.textContent).toBe("$16.65");
    expect(blog.getByRole("link", { name: "Blog Writer" }).getAttribute("href")).toBe(
      "/applications/blog-writer",
    );
    expect(blog.getByRole("link", { name: "Manage Blog Writer" }).getAttribute("href")).toBe(
      "/prompts/blog-writer",
    );
    expect(blog.getByRole("link", { name: "Analytics of Blog Writer" }).getAttribute("href")).toBe(
      "/applications/blog-writer/analytics",
    );
    expect(blog.getByRole("button", { name: "Download" })).toBeDefined();
    const flow = within(within(cards).getByRole("listitem", { name: "Support Bot" }));
    expect(flow.getByText("workflow")).toBeDefined();
    expect(flow.getByRole("link", { name: "Manage Support Bot" }).getAttribute("href")).toBe(
      "/workflows/support-bot",
    );
  });

  it("shows someone without applications SPEC's empty state, the links and first steps: explore, wallet, API key, first app", async () => {
    stubSignedInApi({ "GET /api/app/": () => jsonResponse([]) });
    renderRoute("/dashboard", { auth: createTestAuth("signed-in") });

    const steps = await screen.findByRole("region", { name: "Get started" });
    const links = within(steps)
      .getAllByRole("link")
      .map((link) => [link.querySelector("span.font-medium")?.textContent, link.getAttribute("href")]);
    expect(links).toEqual([
      ["Explore apps", "/explore"],
      ["Top up your wallet", "/wallet"],
      ["Create an API key", "/api-keys"],
      ["Create your first app", "/applications/create"],
    ]);
    expect(screen.getByRole("heading", { name: "No applications" })).toBeDefined();
    expect(screen.getByText("Get started by creating a new application.")).toBeDefined();
    for (const [name, href] of [
      ["Global Analytics", "/analytics"],
      ["Manage Prompts", "/prompts"],
      ["Manage Workflows", "/workflows"],
    ]) {
      expect(screen.getByRole("link", { name }).getAttribute("href")).toBe(href);
    }
    const summary = screen.getByRole("region", { name: "Summary" });
    expect(within(summary).getByText("Total Applications").nextSibling?.textContent).toBe("0");
  });

  it("shows 'Failed to load dashboard data' when the list fails", async () => {
    stubSignedInApi({ "GET /api/app/": () => jsonResponse({ message: "down" }, 500) });
    renderRoute("/dashboard", { auth: createTestAuth("signed-in") });

    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("Failed to load dashboard data");
  });
});
