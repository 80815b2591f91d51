import type { LabelMove, PromptLabels, PromptVersion } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { previousProduction } from "../../lib/releases/release-actions";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse } from "../../test/fetch-stub";
import { applicationFixture, promptConfigFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";
import { defaultComparison } from "./version-compare";

const base = promptConfigFixture().active_version;

function version(number: number, changes: Partial<PromptVersion>): PromptVersion {
  return { ...base, id: `version-${number}`, version: number, is_active: false, labels: [], ...changes };
}

const v3 = version(3, {
  changelog: "Shorter answers",
  system_prompt: "You are a terse writer.",
  model: "claude-3-haiku",
  max_tokens: 512,
  author_name: "grace",
  labels: ["latest"],
});
const v2 = version(2, { changelog: "Fix tone", is_active: true, labels: ["production"] });
const v1 = version(1, { changelog: "First", prompt_template: "About {{topic}}.", labels: ["staging"] });

const moves: LabelMove[] = [
  {
    id: "move-2",
    name: "production",
    from_version: 1,
    to_version: 2,
    actor_name: "ada",
    reason: "Better tone",
    created_at: "2024-05-02T10:00:00.000Z",
  },
  {
    id: "move-1",
    name: "staging",
    from_version: null,
    to_version: 1,
    actor_name: "ada",
    reason: "",
    created_at: "2024-05-01T10:00:00.000Z",
  },
];
const labels: PromptLabels = {
  labels: [
    { name: "production", version: 2, moved_at: "2024-05-02T10:00:00.000Z", moved_by_name: "ada" },
    { name: "latest", version: 3, moved_at: "2024-05-03T10:00:00.000Z", moved_by_name: null },
    { name: "staging", version: 1, moved_at: "2024-05-01T10:00:00.000Z", moved_by_name: "ada" },
  ],
  moves,
};

function stubVersionsApi(extra = {}) {
  return stubSignedInApi({
    "GET /api/app/blog-writer/": () => jsonResponse(applicationFixture({ status: "live" })),
    "GET /api/app/blog-writer/prompt/": () =>
      jsonResponse(
        promptConfigFixture({
          latest_version: v3,
          active_version: v2,
          production_version: 2,
          current_version: 3,
        }),
      ),
    "GET /api/prompts/prompt-1/versions/": () => jsonResponse([v3, v2, v1]),
    "GET /api/prompts/prompt-1/labels/": () => jsonResponse(labels),
    ...extra,
  });
}

function renderVersions() {
  return renderRoute("/prompts/blog-writer/versions", { auth: createTestAuth("signed-in") });
}

function row(number: number) {
  return within(screen.getByRole("listitem", { name: `Version ${number}` }));
}

describe("versions page", () => {
  it("lists the versions newest first with their note, author, model and labels", async () => {
    stubVersionsApi();
    renderVersions();

    // The first test of the file also waits for the route's lazily loaded page.
    const timeline = await screen.findByRole("list", { name: "Versions" }, { timeout: 5_000 });
    expect(
      within(timeline)
        .getAllByRole("listitem")
        .map((item) => item.getAttribute("aria-label")),
    ).toEqual(["Version 3", "Version 2", "Version 1"]);
    expect(row(3).getByText("Shorter answers")).toBeDefined();
    expect(row(2).getByText("Fix tone")).toBeDefined();
    expect(row(3).getByText(/grace/)).toBeDefined();
    expect(row(3).getByText("claude-3-haiku")).toBeDefined();
    expect(row(3).getByText("latest")).toBeDefined();
    expect(row(2).getByText("production")).toBeDefined();
    // Production is the one version without a Promote button; the others have one.
    expect(row(2).queryByRole("button", { name: "Promote to production" })).toBeNull();
    expect(row(3).getByRole("button", { name: "Promote to production" })).toBeDefined();
    expect(row(1).getByRole("button", { name: "Remove label staging" })).toBeDefined();
    expect(row(2).queryByRole("button", { name: "Remove label production" })).toBeNull();

    const nav = screen.getByRole("navigation", { name: "Prompt app pages" });
    expect(within(nav).getByRole("link", { name: "Versions" }).getAttribute("aria-current")).toBe("page");
    const release = screen.getByRole("region", { name: "Release" });
    expect(release.textContent).toContain("Callers get v2");
    expect(release.textContent).toContain("You saved v3 since");
  });

  it("compares production with the latest by default, line by line and setting by setting", async () => {
    stubVersionsApi();
    renderVersions();

    await screen.findByRole("list", { name: "Versions" });
    expect((screen.getByLabelText("From") as HTMLSelectElement).value).toBe("2");
    expect((screen.getByLabelText("To") as HTMLSelectElement).value).toBe("3");
    const system = within(screen.getByRole("region", { name: "System prompt" }));
    expect(system.getByText("+1")).toBeDefined();
    expect(system.getByText("You are a helpful writer.")).toBeDefined();
    expect(system.getByText("You are a terse writer.")).toBeDefined();
    expect(
      within(screen.getByRole("region", { name: "Prompt template" })).getByText("No changes"),
    ).toBeDefined();

    const settings = within(screen.getByRole("region", { name: "Model settings" }));
    const changed = settings
      .getAllByRole("row")
      .filter((tr) => tr.hasAttribute("data-changed"))
      .map((tr) => tr.textContent);
    expect(changed).toEqual(["Model (changed)gpt-4-turboclaude-3-haiku", "Max tokens (changed)2048512"]);

    await userEvent.click(screen.getByRole("button", { name: "Unified" }));
    expect(screen.getByRole("button", { name: "Unified" }).getAttribute("aria-pressed")).toBe("true");
    expect(system.getByText("You are a terse writer.")).toBeDefined();

    await userEvent.selectOptions(screen.getByLabelText("From"), "1");
    const template = within(screen.getByRole("region", { name: "Prompt template" }));
    expect(template.getByText("About {{topic}}.")).toBeDefined();
    expect(template.getByText("Write about {{topic}}.")).toBeDefined();
  });

  it("promotes any version to production after saying what callers will get", async () => {
    const api = stubVersionsApi({
      "PUT /api/prompts/prompt-1/labels/production": () => jsonResponse(labels),
    });
    renderVersions();

    await screen.findByRole("list", { name: "Versions" });
    await userEvent.click(row(1).getByRole("button", { name: "Promote to production" }));
    const dialog = await screen.findByRole("dialog", { name: "Promote v1 to production?" });
    expect(dialog.textContent).toContain("get v1 on their next call instead of v2");
    await userEvent.type(within(dialog).getByLabelText("Reason (optional)"), "Back to basics");
    await userEvent.click(within(dialog).getByRole("button", { name: "Promote v1" }));

    await waitFor(() => expect(api.callsTo("PUT /api/prompts/prompt-1/labels/production")).toHaveLength(1));
    expect(api.callsTo("PUT /api/prompts/prompt-1/labels/production")[0]?.body).toEqual({
      version: 1,
      reason: "Back to basics",
    });
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
  });

  it("rolls back to the previous production in one click and a confirmation", async () => {
    // Production is the latest (v3), released over v2: the one action is the rollback.
    const released: LabelMove = {
      id: "move-3",
      name: "production",
      from_version: 2,
      to_version: 3,
      actor_name: "ada",
      reason: "",
      created_at: "2024-05-04T10:00:00.000Z",
    };
    const api = stubVersionsApi({
      "GET /api/app/blog-writer/prompt/": () =>
        jsonResponse(
          promptConfigFixture({
            latest_version: v3,
            active_version: v3,
            production_version: 3,
            current_version: 3,
          }),
        ),
      "GET /api/prompts/prompt-1/labels/": () => jsonResponse({ ...labels, moves: [released, ...moves] }),
      "PUT /api/prompts/prompt-1/labels/production": () => jsonResponse(labels),
    });
    renderVersions();

    const release = await screen.findByRole("region", { name: "Release" });
    await userEvent.click(await within(release).findByRole("button", { name: "Roll back to v2" }));
    expect(within(release).queryByRole("button", { name: /Promote/ })).toBeNull();
    const dialog = await screen.findByRole("dialog", { name: "Roll back to v2?" });
    await userEvent.click(within(dialog).getByRole("button", { name: "Roll back to v2" }));

    await waitFor(() => expect(api.callsTo("PUT /api/prompts/prompt-1/labels/production")).toHaveLength(1));
    expect(api.callsTo("PUT /api/prompts/prompt-1/labels/production")[0]?.body).toEqual({
      version: 2,
      reason: "Rollback",
    });
  });

  it("offers one button per action: after a rollback from v3, only Promote v3", async () => {
    // Production was rolled back from v3 to v2; v3 is still the latest save.
    const rolledBack: LabelMove = {
      id: "move-3",
      name: "production",
      from_version: 3,
      to_version: 2,
      actor_name: "ada",
      reason: "Worse",
      created_at: "2024-05-04T10:00:00.000Z",
    };
    stubVersionsApi({
      "GET /api/prompts/prompt-1/labels/": () => jsonResponse({ ...labels, moves: [rolledBack, ...moves] }),
    });
    renderVersions();

    const release = await screen.findByRole("region", { name: "Release" });
    await waitFor(() => expect(within(release).getAllByRole("button")).toHaveLength(1));
    expect(within(release).getByRole("button", { name: "Promote v3" })).toBeDefined();
    expect(within(release).queryByRole("button", { name: /Roll back/ })).toBeNull();
  });

  it("offers nothing when production is the latest and never moved by hand", async () => {
    stubVersionsApi({
      "GET /api/app/blog-writer/prompt/": () =>
        jsonResponse(
          promptConfigFixture({
            latest_version: v3,
            active_version: v3,
            production_version: 3,
            current_version: 3,
          }),
        ),
      "GET /api/prompts/prompt-1/labels/": () => jsonResponse({ ...labels, moves: [] }),
    });
    renderVersions();

    const release = await screen.findByRole("region", { name: "Release" });
    await screen.findByRole("list", { name: "Label moves" }).catch(() => undefined);
    expect(within(release).queryAllByRole("button")).toHaveLength(0);
    expect(release.textContent).toContain("Callers get v3");
  });

  it("names a running experiment and its split in the header, from the serving state", async () => {
    stubVersionsApi({
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
              { version: 2, percent: 50 },
              { version: 3, percent: 50 },
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
    renderVersions();

    const release = await screen.findByRole("region", { name: "Release" });
    expect(
      await within(release).findByText("Experiment running: v2 50% · v3 50% — callers are split"),
    ).toBeDefined();
    expect(release.textContent).toContain("Production is v2");
    expect(release.textContent).not.toContain("Callers get v2");
  });

  it("sets and removes the creator's own labels", async () => {
    const api = stubVersionsApi({
      "PUT /api/prompts/prompt-1/labels/canary": () => jsonResponse(labels),
      "DELETE /api/prompts/prompt-1/labels/staging": () => jsonResponse(labels),
    });
    renderVersions();

    await screen.findByRole("list", { name: "Versions" });
    await userEvent.click(row(3).getByRole("button", { name: "Add a label to v3" }));
    let dialog = await screen.findByRole("dialog", { name: "Label v3" });
    const name = within(dialog).getByLabelText("Label name");
    expect((name as HTMLInputElement).value).toBe("staging");
    expect(dialog.textContent).toContain("Moves staging from v1 to v3.");
    await userEvent.clear(name);
    await userEvent.type(name, "9bad");
    await userEvent.click(within(dialog).getByRole("button", { name: "Set label" }));
    expect(within(dialog).getByText(/starting with a letter/)).toBeDefined();
    await userEvent.clear(name);
    await userEvent.type(name, "canary");
    await userEvent.click(within(dialog).getByRole("button", { name: "Set label" }));
    await waitFor(() => expect(api.callsTo("PUT /api/prompts/prompt-1/labels/canary")).toHaveLength(1));
    expect(api.callsTo("PUT /api/prompts/prompt-1/labels/canary")[0]?.body).toEqual({ version: 3 });
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());

    await userEvent.click(row(1).getByRole("button", { name: "Remove label staging" }));
    dialog = await screen.findByRole("dialog", { name: "Remove the label staging?" });
    await userEvent.click(within(dialog).getByRole("button", { name: "Remove label" }));
    await waitFor(() => expect(api.callsTo("DELETE /api/prompts/prompt-1/labels/staging")).toHaveLength(1));
  });

  it("lists every label move: who, from → to, why and when", async () => {
    stubVersionsApi();
    renderVersions();

    const history = await screen.findByRole("list", { name: "Label moves" });
    const items = within(history).getAllByRole("listitem");
    expect(items).toHaveLength(2);
    expect(items[0]?.textContent).toContain("production");
    expect(items[0]?.textContent).toContain("v1 → v2");
    expect(items[0]?.textContent).toContain("Better tone");
    expect(items[0]?.textContent).toContain("ada");
    expect(items[1]?.textContent).toContain("set on v1");
    expect(items[1]?.textContent).toContain("No reason given");
  });

  it("says 'Prompt not found' for a missing app", async () => {
    stubSignedInApi({
      "GET /api/app/blog-writer/": () =>
        jsonResponse({ code: "not_found", message: "Application not found", status: 404 }, 404),
    });
    renderVersions();
    expect(await screen.findByRole("heading", { name: "Prompt not found" })).toBeDefined();
  });

  it("picks what a rollback and the first comparison are", () => {
    expect(previousProduction(moves, 2)).toBe(1);
    expect(previousProduction(moves, 3)).toBeNull();
    expect(defaultComparison([v3, v2, v1], 2)).toEqual([2, 3]);
    expect(defaultComparison([v3, v2, v1], 3)).toEqual([2, 3]);
    expect(defaultComparison([v1], 1)).toEqual([1, 1]);
  });
});
