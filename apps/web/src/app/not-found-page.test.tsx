import { screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { stubFetch } from "../test/fetch-stub";
import { renderRoute } from "../test/render-route";

describe("not-found screen", () => {
  it.each(["/nope", "/applications/a/b/c", "/auth/elsewhere"])("answers %s with 404", (path) => {
    stubFetch({});
    renderRoute(path);

    expect(screen.getByText("404")).toBeDefined();
    expect(screen.getByRole("heading", { name: "Page not found" })).toBeDefined();
    expect(screen.getByText("Please check the URL in the address bar and try again.")).toBeDefined();
    expect(screen.getByRole("link", { name: "Go home" }).getAttribute("href")).toBe("/");
    expect(screen.getByRole("link", { name: "Go to Dashboard" }).getAttribute("href")).toBe("/dashboard");
  });
});
