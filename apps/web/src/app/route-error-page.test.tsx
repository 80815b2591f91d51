import { screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { stubFetch } from "../test/fetch-stub";
import { renderRoute } from "../test/render-route";
import { RouteErrorPage } from "./route-error-page";

describe("router error screen", () => {
  it("shows 'Unexpected Application Error!' with the error's message", async () => {
    stubFetch({});
    renderRoute("/", {
      routes: [
        {
          path: "/",
          errorElement: <RouteErrorPage />,
          hydrateFallbackElement: <p>Loading</p>,
          loader: () => {
            throw new Error("The analytics service exploded");
          },
          element: <p>never shown</p>,
        },
      ],
    });

    expect(await screen.findByRole("heading", { name: "Unexpected Application Error!" })).toBeDefined();
    expect(screen.getByText("The analytics service exploded")).toBeDefined();
    expect(screen.getByRole("button", { name: "Reload page" })).toBeDefined();
    expect(screen.getByRole("link", { name: "Go home" }).getAttribute("href")).toBe("/");
  });
});
