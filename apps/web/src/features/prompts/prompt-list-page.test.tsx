import { screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse } from "../../test/fetch-stub";
import { applicationFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";

const apps = [
  applicationFixture({ slug: "blog-writer", name: "Blog Writer", status: "live", visibility: "public" }),
  applicationFixture({ slug: "chat-helper", name: "Chat Helper", interaction_mode: "chat", price_cents: 5 }),
  applicationFixture({ slug: "flow", name: "Some Workflow", type: "workflow" }),
];

function cardNames(): string[] {
  return within(screen.getByRole("main"))
    .queryAllByRole("listitem")
    .map((item) => within(item).getByRole("heading").textContent ?? "");
}

describe("prompt list", () => {
  it("lists only prompt apps as cards linking to their editor", async () => {
    stubSignedInApi({ "GET /api/app/": () => jsonResponse(apps) });
    renderRoute("/prompts", { auth: createTestAuth("signed-in") });

    const link = await screen.findByRole("link", { name: "Chat Helper" });
    expect(link.getAttribute("href")).toBe("/prompts/chat-helper");
    expect(cardNames()).toEqual(["Blog Writer", "Chat Helper"]);
    const card = within(link.closest("li") as HTMLElement);
    expect(card.getByText("Chat")).toBeDefined();
    expect(card.getByText("private")).toBeDefined();
    expect(card.getByText("draft")).toBeDefined();
    expect(card.getByText("Created by Ada L.")).toBeDefined();
    expect(card.getByText("$0.05")).toBeDefined();
    expect(screen.getByRole("link", { name: "Create New Prompt" }).getAttribute("href")).toBe(
      "/applications/create?type=prompt",
    );
  });

  it("filters by visibility and status on the page", async () => {
    const api = stubSignedInApi({ "GET /api/app/": () => jsonResponse(apps) });
    renderRoute("/prompts", { auth: createTestAuth("signed-in") });

    const visibility = await screen.findByLabelText("Visibility");
    expect(Array.from((visibility as HTMLSelectElement).options).map((option) => option.text)).toEqual([
      "All Visibility",
      "Private",
      "Public",
      "Embed",
    ]);
    expect(
      Array.from((screen.getByLabelText("Status") as HTMLSelectElement).options).map((option) => option.text),
    ).toEqual(["All Status", "Draft", "Live", "Archived"]);

    // Filtering asks the server nothing: the list already loaded is filtered on the page.
    const loads = api.callsTo("GET /api/app/").length;
    await userEvent.selectOptions(visibility, "public");
    expect(cardNames()).toEqual(["Blog Writer"]);
    await userEvent.selectOptions(screen.getByLabelText("Status"), "draft");
    expect(cardNames()).toEqual([]);
    expect(screen.getByText("No prompt applications match these filters.")).toBeDefined();
    expect(api.callsTo("GET /api/app/")).toHaveLength(loads);
  });

  it("invites to create the first prompt application", async () => {
    stubSignedInApi({ "GET /api/app/": () => jsonResponse([apps[2]]) });
    renderRoute("/prompts", { auth: createTestAuth("signed-in") });

    expect(await screen.findByRole("heading", { name: "No prompt applications" })).toBeDefined();
    expect(screen.getByText("Get started by creating your first prompt application.")).toBeDefined();
  });
});
