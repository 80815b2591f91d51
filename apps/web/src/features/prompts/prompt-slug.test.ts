import { describe, expect, it } from "vitest";
import { slugFromName } from "./prompt-slug";

describe("slug from name", () => {
  it.each([
    ["Blog Post Writer", "blog-post-writer"],
    ["  Hello,   World!!  ", "hello-world"],
    ["--Already--Hyphenated--", "already-hyphenated"],
    ["GPT 4 / Summaries & More", "gpt-4-summaries-more"],
    ["Café au lait", "caf-au-lait"],
    ["!!!", ""],
  ])("turns %j into %j", (name, slug) => {
    expect(slugFromName(name)).toBe(slug);
  });

  it("keeps slugs within 60 characters without a trailing hyphen", () => {
    const slug = slugFromName(`${"a".repeat(59)} b`);
    expect(slug).toBe("a".repeat(59));
  });
});
