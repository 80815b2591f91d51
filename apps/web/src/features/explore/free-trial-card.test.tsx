import { screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse, stubFetch } from "../../test/fetch-stub";
import { exploreAppDetailFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";

const DETAIL = "GET /api/explore/apps/haiku-writer";
const TRIAL = "/api/app/haiku-writer/trial/";

const creditOf = (callsLeft: number) => ({
  id: "grant-1",
  kind: "trial",
  app: { slug: "haiku-writer", name: "Haiku Writer" },
  creator: "Ada",
  code: null,
  calls_left: callsLeft,
  credit_left_micros: null,
  bonus: null,
  expires_at: null,
  created_at: "2026-11-29T10:00:00.000Z",
});

describe("free trial on Explore's app page", () => {
  it("starts the signed-in caller's trial and then says how many free calls are left", async () => {
    let started = false;
    const api = stubSignedInApi({
      [DETAIL]: () => jsonResponse(exploreAppDetailFixture({ trial_calls: 3 })),
      [`GET ${TRIAL}`]: () =>
        jsonResponse({ trial_calls: 3, used: started, calls_left: started ? 3 : null, trials_started: null }),
      [`POST ${TRIAL}`]: () => {
        started = true;
        return jsonResponse(creditOf(3), 201);
      },
    });
    renderRoute("/explore/haiku-writer", { auth: createTestAuth("signed-in") });

    await userEvent.click(await screen.findByRole("button", { name: "Start free trial (3 calls)" }));

    expect(await screen.findByText("Your free trial is on")).toBeDefined();
    expect(screen.getByText(/3 calls left/)).toBeDefined();
    expect(api.callsTo(`POST ${TRIAL}`)).toHaveLength(1);
  });

  it("shows the server's refusal when this person took the trial on another account", async () => {
    stubSignedInApi({
      [DETAIL]: () => jsonResponse(exploreAppDetailFixture({ trial_calls: 2 })),
      [`GET ${TRIAL}`]: () =>
        jsonResponse({ trial_calls: 2, used: false, calls_left: null, trials_started: null }),
      [`POST ${TRIAL}`]: () =>
        jsonResponse(
          {
            code: "conflict",
            message:
              "This app's free trial was already taken with one of your saved cards: it is offered once per person",
            status: 409,
          },
          409,
        ),
    });
    renderRoute("/explore/haiku-writer", { auth: createTestAuth("signed-in") });

    await userEvent.click(await screen.findByRole("button", { name: "Start free trial (2 calls)" }));

    expect(await screen.findByText(/already taken with one of your saved cards/)).toBeDefined();
  });

  it("invites a signed-out visitor to sign in, and shows nothing for an app without a trial", async () => {
    stubFetch({ [DETAIL]: () => jsonResponse(exploreAppDetailFixture({ trial_calls: 5 })) });
    const { unmount } = renderRoute("/explore/haiku-writer");
    expect(await screen.findByRole("link", { name: "Sign in to start a free trial" })).toBeDefined();
    expect(screen.getByText(/pays for your first 5 calls/)).toBeDefined();
    unmount();

    stubFetch({ [DETAIL]: () => jsonResponse(exploreAppDetailFixture()) });
    renderRoute("/explore/haiku-writer");
    await screen.findByRole("heading", { name: "Try it" });
    await waitFor(() => expect(screen.queryByRole("heading", { name: "Free trial" })).toBeNull());
  });
});
