import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse, stubFetch } from "../../test/fetch-stub";
import { exploreAppFixture } from "../../test/fixtures";
import { currentPath, renderRoute } from "../../test/render-route";

const flow = exploreAppFixture({
  name: "Research Flow",
  slug: "research-flow",
  type: "workflow",
  creator_name: "Grace H.",
  description: "Finds sources.",
  price_cents: 250,
});
const apps = [exploreAppFixture(), flow];
const page = (data = apps, extra = {}) =>
  jsonResponse({ data, page: 1, page_size: 24, total: data.length, has_more: false, ...extra });

function cardNames(): string[] {
  return within(screen.getByRole("list", { name: "Apps" }))
    .getAllByRole("heading")
    .map((heading) => heading.textContent ?? "");
}

describe("explore", () => {
  it("shows live apps to a signed-out visitor as cards linking to their page", async () => {
    const api = stubFetch({ "GET /api/explore/apps": () => page() });
    renderRoute("/explore");

    const link = await screen.findByRole("link", { name: "Research Flow" });
    expect(link.getAttribute("href")).toBe("/explore/research-flow");
    const card = within(link.closest("li") as HTMLElement);
    expect(card.getByText("by Grace H.")).toBeDefined();
    expect(card.getByText("Finds sources.")).toBeDefined();
    expect(card.getByText("workflow")).toBeDefined();
    expect(card.getByText("$2.50")).toBeDefined();
    expect(cardNames()).toEqual(["Haiku Writer", "Research Flow"]);
    expect(screen.getByText("2 apps")).toBeDefined();
    expect(api.requests[0]?.headers.get("Authorization")).toBeNull();
    expect(
      within(screen.getByRole("navigation", { name: "Main" }))
        .getByRole("link", { name: "Explore" })
        .getAttribute("aria-current"),
    ).toBe("page");
  });

  it("searches and filters through the API, keeping the filters in the address", async () => {
    const api = stubFetch({
      "GET /api/explore/apps": () => page(),
      "GET /api/explore/apps?type=workflow": () => page([flow]),
      "GET /api/explore/apps?q=flow&type=workflow": () => page([flow]),
      "GET /api/explore/apps?q=flow&type=workflow&max_price_cents=5": () => page([]),
    });
    const { router } = renderRoute("/explore", { auth: createTestAuth("signed-in") });
    await screen.findByRole("link", { name: "Haiku Writer" });

    await userEvent.selectOptions(screen.getByLabelText("Type"), "workflow");
    await waitFor(() => expect(cardNames()).toEqual(["Research Flow"]));
    await userEvent.type(screen.getByLabelText("Search"), "flow{Enter}");
    await waitFor(() => expect(currentPath(router)).toBe("/explore?type=workflow&q=flow"));
    expect(api.callsTo("GET /api/explore/apps?q=flow&type=workflow")).toHaveLength(1);

    expect(
      Array.from((screen.getByLabelText("Price per call") as HTMLSelectElement).options).map((o) => o.text),
    ).toEqual(["Any price", "Up to $0.05", "Up to $0.25", "Up to $1.00", "Over $1.00"]);
    await userEvent.selectOptions(screen.getByLabelText("Price per call"), "-5");
    expect(await screen.findByRole("heading", { name: "No apps found" })).toBeDefined();
  });

  it("says no apps were found and resets the filters", async () => {
    const api = stubFetch({
      "GET /api/explore/apps?mode=chat": () => page([]),
      "GET /api/explore/apps": () => page(),
    });
    const { router } = renderRoute("/explore?mode=chat");

    expect(await screen.findByRole("heading", { name: "No apps found" })).toBeDefined();
    expect((screen.getByLabelText("Mode") as HTMLSelectElement).value).toBe("chat");
    await userEvent.click(screen.getByRole("button", { name: "Reset filters" }));

    expect(await screen.findByRole("link", { name: "Haiku Writer" })).toBeDefined();
    expect(currentPath(router)).toBe("/explore");
    expect((screen.getByLabelText("Mode") as HTMLSelectElement).value).toBe("");
    expect(api.callsTo("GET /api/explore/apps")).toHaveLength(1);
  });

  it("pages through a long catalogue", async () => {
    stubFetch({
      "GET /api/explore/apps": () => page(apps, { total: 30, has_more: true }),
      "GET /api/explore/apps?page=2": () =>
        page([exploreAppFixture({ name: "Late App", slug: "late" })], { page: 2, total: 30 }),
    });
    renderRoute("/explore");

    const pages = await screen.findByRole("navigation", { name: "Pages" });
    expect(within(pages).getByText("Page 1 of 2")).toBeDefined();
    expect(within(pages).getByRole("button", { name: "Previous" }).hasAttribute("disabled")).toBe(true);
    await userEvent.click(within(pages).getByRole("button", { name: "Next" }));
    expect(await screen.findByRole("link", { name: "Late App" })).toBeDefined();
    expect(within(pages).getByRole("button", { name: "Next" }).hasAttribute("disabled")).toBe(true);
  });

  it("shows the server's message when the catalogue cannot load", async () => {
    stubFetch({
      "GET /api/explore/apps": () =>
        jsonResponse({ code: "unavailable", message: "The catalogue is resting", status: 503 }, 503),
    });
    renderRoute("/explore");

    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("Error");
    expect(alert.textContent).toContain("The catalogue is resting");
  });
});
