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
});
