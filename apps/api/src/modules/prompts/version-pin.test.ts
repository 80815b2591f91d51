import { describe, expect, it } from "vitest";
import { AppError } from "../../lib/errors.ts";
import { openAiModel } from "../gateway/openai-request.ts";
import { parseVersionPin } from "./load-prompt.ts";

/** How a pin is read (docs/decisions/057, 072): a version-shaped pin is a version or a 400, never a label. */
describe("parseVersionPin", () => {
  it.each([
    ["v12", { version: 12 }],
    ["V12", { version: 12 }],
    ["12", { version: 12 }],
    [" v3 ", { version: 3 }],
    ["staging", { label: "staging" }],
    ["v2-beta", { label: "v2-beta" }],
    ["version", { label: "version" }],
  ])("reads %j", (text, pin) => {
    expect(parseVersionPin(text, "model")).toEqual(pin);
  });

  it.each(["v0", "V0", "0", "v-1", "-1", "v01", "007", "v00"])(
    "refuses %j as a version that cannot be, naming the field",
    (text) => {
      const error = (() => {
        try {
          parseVersionPin(text, "Promptmint-Version header");
        } catch (thrown) {
          return thrown;
        }
      })();
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).status).toBe(400);
      expect((error as AppError).message).toContain("versions start at v1");
      expect((error as AppError).fields).toHaveProperty(["Promptmint-Version header"]);
    },
  );

  it("refuses what is neither a version nor a label", () => {
    expect(() => parseVersionPin("Staging!", "model")).toThrow("must be a version");
  });

  it("leaves an empty pin out", () => {
    expect(parseVersionPin("  ", "model")).toBeUndefined();
    expect(parseVersionPin(undefined, "model")).toBeUndefined();
  });

  it("says why in model: slug@v0 is about versions, slug@Bad! about the pin's form", () => {
    expect(() => openAiModel("app@v0")).toThrow("model pins version 'v0', and versions start at v1");
    expect(() => openAiModel("app@Bad!")).toThrow(AppError);
    expect(openAiModel("app@V7")).toEqual({ slug: "app", pin: { version: 7 } });
  });
});
