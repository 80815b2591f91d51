import { screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { stubFetch } from "../../test/fetch-stub";
import { renderRoute } from "../../test/render-route";

describe("landing page", () => {
  it("invites a visitor to sign up or sign in", async () => {
    stubFetch({});
    renderRoute("/");

    expect(screen.getByRole("heading", { level: 1 }).textContent).toMatch(/Monetize your AI prompts/);
    expect(screen.getByRole("link", { name: "Get Started Free" }).getAttribute("href")).toBe("/register");
    expect(screen.getByRole("link", { name: "Sign In" }).getAttribute("href")).toBe("/login");
    expect(screen.getByRole("link", { name: "Learn more" }).getAttribute("href")).toBe("#features");
    expect(
      screen.getByRole("link", { name: "Explore the apps creators have published" }).getAttribute("href"),
    ).toBe("/explore");
    expect(screen.queryByRole("link", { name: /Go to Dashboard/ })).toBeNull();
    expect(screen.queryByText(/Welcome back/)).toBeNull();
  });

  it("describes the features in the #features section", () => {
    stubFetch({});
    renderRoute("/");

    const features = document.getElementById("features");
    expect(features).not.toBeNull();
    for (const title of [
      "One-click API hosting",
      "Seamless payments",
      "Usage analytics",
      "Bring your workflows",
    ]) {
      expect(screen.getByRole("heading", { name: title })).toBeDefined();
      expect(features?.textContent).toContain(title);
    }
  });

  it("welcomes a signed-in user back and links to the dashboard", async () => {
    stubSignedInApi();
    renderRoute("/", { auth: createTestAuth("signed-in") });

    expect(screen.getByRole("link", { name: /Go to Dashboard/ }).getAttribute("href")).toBe("/dashboard");
    expect(await screen.findByText("Welcome back, Ada L.!")).toBeDefined();
    expect(screen.queryByRole("link", { name: "Get Started Free" })).toBeNull();
  });

  it("makes only the promises the product keeps (payouts, fees, model cost, analytics, providers)", () => {
    stubFetch({});
    renderRoute("/");

    const hero = screen.getByRole("heading", { level: 1 }).parentElement?.textContent ?? "";
    expect(hero).toContain("set your price per call, and earn on every paid call.");
    const card = (title: string) =>
      screen.getByRole("heading", { name: title }).parentElement?.textContent?.replace(title, "");
    expect(card("Seamless payments")).toBe(
      "Set a price per call and earn on every paid call, less the platform fee and, on the platform's model keys, the model cost. Plans, wallets and payouts to your bank through Stripe are built in.",
    );
    expect(card("Usage analytics")).toBe(
      "Follow invocations, success rates, response times and revenue for every application, and token usage across them.",
    );
    expect(card("Bring your workflows")).toBe(
      "Turn a Dify, n8n or Flowise workflow into a paid API with the same keys, limits and billing.",
    );
    expect(card("One-click API hosting")).toBe(
      "Publish a prompt template with its model settings as a production HTTP endpoint. No servers, no deploys.",
    );
    // Stale or over-promising copy stays gone: not every call is paid (owners' own and failed calls
    // are free), and the creator's share is net of the fee and model cost.
    const page = document.body.textContent ?? "";
    expect(page).not.toMatch(/every invocation|every\s+time someone uses it/);
  });
});
