import { screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { formatPrice } from "../../lib/format";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse, type RecordedRequest } from "../../test/fetch-stub";
import { applicationFixture, promptConfigFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";

const app = applicationFixture({ status: "live", visibility: "public", price_cents: 5 });

/** A stand-in for the server's estimate: gpt-4-turbo at $30 per million output tokens, 12 input tokens at $10. */
function estimateOf(body: { max_tokens: number; price_cents: number; model_keys?: string; model: string }) {
  const gross = body.price_cents * 10_000;
  const fee = gross / 10;
  const model = body.model_keys === "creator" ? 0 : body.max_tokens * 30 + 12 * 10;
  const afterFee = gross - fee;
  return {
    model: body.model,
    model_keys: body.model_keys ?? "platform",
    input_tokens: 12,
    output_tokens: body.max_tokens,
    gross_micros: gross,
    fee_micros: fee,
    model_cost_micros: model,
    net_micros: afterFee - model,
    minimum_price_cents: Math.max(1, Math.ceil(model / 9000)),
    covered: afterFee >= model,
  };
}

function stubApi() {
  return stubSignedInApi({
    "GET /api/app/blog-writer/": () => jsonResponse(app),
    "GET /api/app/blog-writer/prompt/": () => jsonResponse(promptConfigFixture()),
    "GET /api/prompts/prompt-1/versions/": () => jsonResponse([promptConfigFixture().active_version]),
    "GET /api/models/": () =>
      jsonResponse({
        models: [
          {
            id: "gpt-4-turbo",
            label: "GPT-4 Turbo",
            provider: "openai",
            configured: true,
            env_var: "OPENAI_API_KEY",
          },
        ],
        sandbox_fallback: false,
      }),
    "GET /api/model-keys": () =>
      jsonResponse({
        keys: [
          {
            provider: "openai",
            configured: true,
            masked_key: "••••abcd",
            updated_at: "2025-01-01T00:00:00Z",
          },
          { provider: "anthropic", configured: false, masked_key: null, updated_at: null },
          { provider: "google", configured: false, masked_key: null, updated_at: null },
          { provider: "mistral", configured: false, masked_key: null, updated_at: null },
        ],
      }),
    "POST /api/model-prices/estimate": ({ body }: RecordedRequest) =>
      jsonResponse(estimateOf(body as Parameters<typeof estimateOf>[0])),
  });
}

describe("the editor's cost panel", () => {
  it("formats prices by the one money rule: two decimals, or the sub-cent digits they need", () => {
    expect(formatPrice(614_400)).toBe("$0.6144");
    expect(formatPrice(50_000)).toBe("$0.05");
    expect(formatPrice(-11_560)).toBe("-$0.01156");
    expect(formatPrice(12_345_678)).toBe("$12.345678");
  });

  it("shows gross, fee, worst-case model cost and net, live as max tokens, price and keys change", async () => {
    const api = stubApi();
    renderRoute("/prompts/blog-writer", { auth: createTestAuth("signed-in") });
    await userEvent.click(await screen.findByRole("tab", { name: "Prompt Config" }));

    // 5 cents, gpt-4-turbo, 2048 max tokens: 2048 × 30 + 120 = 61,560 micros > 45,000 after the fee.
    await waitFor(() => expect(screen.getByTestId("cost-model").textContent).toBe("−$0.06156"));
    expect(screen.getByTestId("cost-gross").textContent).toBe("$0.05");
    expect(screen.getByTestId("cost-fee").textContent).toBe("−$0.005");
    expect(screen.getByTestId("cost-net").textContent).toBe("-$0.01656");
    expect(screen.getByRole("alert").textContent).toContain("at least $0.07 per call");
    const first = api.callsTo("POST /api/model-prices/estimate").at(-1)?.body;
    expect(first).toMatchObject({
      model: "gpt-4-turbo",
      model_keys: "platform",
      max_tokens: 2048,
      price_cents: 5,
      prompt_template: "Write about {{topic}}.",
    });

    // Fewer max tokens: 1000 × 30 + 120 = 30,120 micros; net 45,000 − 30,120 = 14,880.
    const maxTokens = screen.getByLabelText("Max Tokens");
    await userEvent.clear(maxTokens);
    await userEvent.type(maxTokens, "1000");
    await waitFor(() => expect(screen.getByTestId("cost-model").textContent).toBe("−$0.03012"));
    expect(screen.getByTestId("cost-net").textContent).toBe("$0.01488");
    expect(screen.queryByRole("alert")).toBeNull();
    expect(api.callsTo("POST /api/model-prices/estimate").at(-1)?.body).toMatchObject({ max_tokens: 1000 });

    // On the creator's own key (an openai key is set) the model cost is 0.
    await userEvent.selectOptions(screen.getByLabelText("Model Keys"), "creator");
    await waitFor(() => expect(screen.getByTestId("cost-model").textContent).toBe("−$0.00"));
    expect(screen.getByTestId("cost-net").textContent).toBe("$0.045");
    expect(screen.getByRole("option", { name: "My own openai key" })).toBeDefined();
  });
});
