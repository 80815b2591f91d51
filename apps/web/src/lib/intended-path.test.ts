import { describe, expect, it } from "vitest";
import {
  fromPathOf,
  INTENDED_PATH_STORAGE_KEY,
  rememberIntendedPath,
  takeIntendedPath,
} from "./intended-path";

describe("intended path", () => {
  it("remembers a path with its search once", () => {
    rememberIntendedPath("/applications/create?type=workflow");

    expect(window.sessionStorage.getItem(INTENDED_PATH_STORAGE_KEY)).toBe(
      "/applications/create?type=workflow",
    );
    expect(takeIntendedPath()).toBe("/applications/create?type=workflow");
    expect(takeIntendedPath()).toBeNull();
  });

  it("never remembers the sign-in and sign-up screens", () => {
    for (const path of [
      "/login",
      "/register",
      "/login?x=1",
      "/auth/login",
      "/auth/register",
      "/auth/callback",
    ]) {
      rememberIntendedPath(path);
    }

    expect(window.sessionStorage.getItem(INTENDED_PATH_STORAGE_KEY)).toBeNull();
  });

  it("ignores paths that would leave the site", () => {
    window.sessionStorage.setItem(INTENDED_PATH_STORAGE_KEY, "//evil.example/x");

    expect(takeIntendedPath()).toBeNull();
    expect(fromPathOf({ from: { pathname: "//evil.example" } })).toBeNull();
  });

  it("reads the router state's from location", () => {
    expect(fromPathOf({ from: { pathname: "/profile", search: "?tab=1", hash: "" } })).toBe("/profile?tab=1");
    expect(fromPathOf(null)).toBeNull();
    expect(fromPathOf({ from: "nope" })).toBeNull();
  });
});
