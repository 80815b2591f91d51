import type { Usage } from "@promptmint/contracts";
import { render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { UsageSummary } from "./usage-summary";

const usage = {
  prompt_tokens: 12,
  completion_tokens: 30,
  total_tokens: 42,
  input_tokens: 12,
  output_tokens: 30,
  latency: 0.5,
  charged_cents: 0,
  paid_by: "owner",
} as Usage;

describe("usage summary", () => {
  it("shows what a call was charged as a figure, and why it was free on its own line", () => {
    render(<UsageSummary usage={usage} />);
    const charged = screen.getByText("Charged").parentElement as HTMLElement;
    const [figure, note] = within(charged).getAllByRole("definition");
    expect(figure?.textContent).toBe("$0.00");
    expect(figure?.className).toContain("whitespace-nowrap");
    expect(note?.textContent).toBe("Free: your own app");
  });
});
