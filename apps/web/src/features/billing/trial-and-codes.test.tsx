import type { PromotionCode } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { APP, renderBillingPage } from "../../test/billing-api";
import { jsonResponse } from "../../test/fetch-stub";

const CODES = "/api/promotion-codes/";

function codeFixture(overrides: Partial<PromotionCode> = {}): PromotionCode {
  return {
    id: "code-1",
    code: "LAUNCH20",
    kind: "amount",
    amount_micros: 50_000_000,
    percent: null,
    cap_micros: null,
    max_redemptions: 100,
    redemptions: 3,
    app: { slug: "my-app", name: "My App" },
    starts_at: "2026-11-29T10:00:00.000Z",
    expires_at: null,
    ended_at: null,
    status: "active",
    created_at: "2026-11-29T10:00:00.000Z",
    ...overrides,
  };
}

describe("free trial and promotion codes on the owner's billing page", () => {
  it("offers a free trial of N calls per consumer, refusing a number out of range", async () => {
    let trialCalls = 0;
    const { api } = renderBillingPage({
      owner: true,
      extra: {
        [`GET ${APP}/trial/`]: () =>
          jsonResponse({ trial_calls: trialCalls, used: false, calls_left: null, trials_started: 4 }),
        [`PUT ${APP}/trial/`]: ({ body }) => {
          trialCalls = (body as { trial_calls: number }).trial_calls;
          return jsonResponse({ trial_calls: trialCalls, used: false, calls_left: null, trials_started: 4 });
        },
      },
    });

    const field = await screen.findByLabelText(/Free calls per consumer/);
    expect(screen.getByText(/4 consumers have started it/)).toBeDefined();
    await userEvent.clear(field);
    await userEvent.type(field, "5000");
    await userEvent.click(screen.getByRole("button", { name: "Save trial" }));
    expect(screen.getByText("Must be between 0 and 1000")).toBeDefined();
    expect(api.callsTo(`PUT ${APP}/trial/`)).toHaveLength(0);

    await userEvent.clear(field);
    await userEvent.type(field, "5{enter}");
    expect(await screen.findByText("Free trial saved")).toBeDefined();
    expect(api.callsTo(`PUT ${APP}/trial/`)[0]?.body).toEqual({ trial_calls: 5 });
    expect(await screen.findByText(/Offered: 5 free calls per consumer/)).toBeDefined();
  });

  it("creates a percent code for this app, lists it with its status, copies and ends it", async () => {
    let codes: PromotionCode[] = [];
    const { api } = renderBillingPage({
      owner: true,
      extra: {
        [`GET ${CODES}`]: () => jsonResponse({ data: codes }),
        [`POST ${CODES}`]: ({ body }) => {
          const sent = body as { code: string; percent: number; cap_cents: number };
          codes = [
            codeFixture({
              code: sent.code,
              kind: "percent",
              amount_micros: null,
              percent: sent.percent,
              cap_micros: sent.cap_cents * 10_000,
              redemptions: 0,
            }),
          ];
          return jsonResponse(codes[0], 201);
        },
        [`DELETE ${CODES}code-1/`]: () => {
          codes = codes.map((code) => ({ ...code, status: "ended", ended_at: "2026-11-29T12:00:00.000Z" }));
          return new Response(null, { status: 204 });
        },
      },
    });

    const form = within(await screen.findByRole("form", { name: "Create a promotion code" }));
    expect(await screen.findByText("No promotion codes yet")).toBeDefined();
    await userEvent.type(form.getByLabelText("Code"), "no");
    await userEvent.click(form.getByRole("button", { name: "Create code" }));
    expect(form.getByText("4 to 32 letters, digits, - or _")).toBeDefined();

    await userEvent.clear(form.getByLabelText("Code"));
    await userEvent.type(form.getByLabelText("Code"), "SPRING25");
    await userEvent.selectOptions(form.getByLabelText("Gives"), "percent");
    await userEvent.clear(form.getByLabelText("Percent of the next top-up"));
    await userEvent.type(form.getByLabelText("Percent of the next top-up"), "25");
    await userEvent.clear(form.getByLabelText("Up to (USD)"));
    await userEvent.type(form.getByLabelText("Up to (USD)"), "7.50");
    await userEvent.click(form.getByRole("button", { name: "Create code" }));

    const row = within(await screen.findByRole("listitem", { name: "SPRING25" }));
    expect(api.callsTo(`POST ${CODES}`)[0]?.body).toEqual({
      code: "SPRING25",
      kind: "percent",
      percent: 25,
      cap_cents: 750,
      max_redemptions: 100,
      app: "my-app",
    });
    expect(row.getByText("Active")).toBeDefined();
    expect(row.getByText(/25% of a top-up, up to \$7\.50/)).toBeDefined();
    expect(row.getByRole("button", { name: "Copy SPRING25" })).toBeDefined();

    await userEvent.click(row.getByRole("button", { name: "End SPRING25" }));
    await waitFor(() => expect(row.getByText("Ended")).toBeDefined());
    expect(row.queryByRole("button", { name: "End SPRING25" })).toBeNull();
  });
});
