import type { EvalCase } from "@promptmint/contracts";
import { screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse } from "../../test/fetch-stub";
import { promptConfigFixture } from "../../test/fixtures";
import { currentPath, renderRoute } from "../../test/render-route";
import { SaveCallAsCaseButton } from "./save-call-as-case-button";

const CALL = "3f2a9c1e-7b4d-4e8a-9c0d-1a2b3c4d5e6f";
const FROM_CALL = "POST /api/prompts/prompt-1/evals/cases/from-call";

const saved: EvalCase = {
  id: "case-9",
  name: "Live call 3f2a9c1e of 2025-11-29 14:30 UTC (model cost $0.0012)",
  inputs: { topic: "bees" },
  query: "Tell me about bees",
  assertions: [{ kind: "rubric", rubric: "Answers like the reference answer … “Bees make honey.”" }],
  position: 3,
  created_at: "2025-11-30T10:00:00.000Z",
  updated_at: "2025-11-30T10:00:00.000Z",
};

function renderButton(contentKept: boolean) {
  return renderRoute("/calls", {
    auth: createTestAuth("signed-in"),
    routes: [
      {
        path: "/calls",
        element: <SaveCallAsCaseButton slug="blog-writer" invocationId={CALL} contentKept={contentKept} />,
      },
      { path: "/prompts/:slug/evals", element: <h1>Evals page</h1> },
    ],
  });
}

describe("Save as eval case", () => {
  it("saves the call through its prompt's evals and links to the Evals page from the toast", async () => {
    const api = stubSignedInApi({
      "GET /api/app/blog-writer/prompt/": () => jsonResponse(promptConfigFixture()),
      [FROM_CALL]: () => jsonResponse(saved, 201),
    });
    const { router } = renderButton(true);
    await userEvent.click(screen.getByRole("button", { name: `Save call ${CALL} as an eval case` }));

    await waitFor(() => expect(api.callsTo(FROM_CALL)).toHaveLength(1));
    expect(api.callsTo(FROM_CALL)[0]?.body).toEqual({ invocation_id: CALL });
    expect(await screen.findByText("Saved as an eval case")).toBeDefined();
    expect(screen.getByText(saved.name)).toBeDefined();
    // Saved once: the row says so instead of offering it again.
    expect(screen.getByText("Saved")).toBeDefined();
    expect(screen.queryByRole("button", { name: `Save call ${CALL} as an eval case` })).toBeNull();

    await userEvent.click(screen.getByRole("button", { name: "Open Evals" }));
    await waitFor(() => expect(currentPath(router)).toBe("/prompts/blog-writer/evals"));
    expect(screen.getByRole("heading", { name: "Evals page" })).toBeDefined();
  });

  it("shows the server's reason when the call cannot be saved, and offers it again", async () => {
    stubSignedInApi({
      "GET /api/app/blog-writer/prompt/": () => jsonResponse(promptConfigFixture()),
      [FROM_CALL]: () =>
        jsonResponse(
          {
            error: "conflict",
            message: "This call is saved as an eval case already (case case-9)",
            fields: { invocation_id: "is saved as an eval case already" },
          },
          409,
        ),
    });
    renderButton(true);
    await userEvent.click(screen.getByRole("button", { name: `Save call ${CALL} as an eval case` }));
    expect(await screen.findByText("This call is saved as an eval case already (case case-9)")).toBeDefined();
    expect(screen.getByRole("button", { name: `Save call ${CALL} as an eval case` })).toBeDefined();
  });

  it("offers nothing for a call whose inputs were not kept, and says why", async () => {
    const api = stubSignedInApi({});
    renderButton(false);
    const note = screen.getByText("Not kept");
    expect(note.getAttribute("title")).toContain("inputs were not kept");
    expect(screen.queryByRole("button")).toBeNull();
    expect(api.callsTo(FROM_CALL)).toHaveLength(0);
  });
});
