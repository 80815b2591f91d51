import { describe, expect, it } from "vitest";
import { renderOutboxPage } from "./mail-pages.ts";

describe("the development outbox page", () => {
  it("shows each message's time as people read it, keeping the exact moment in <time datetime>", () => {
    const html = renderOutboxPage({
      dir: "/tmp/outbox",
      messages: [
        {
          id: "m1",
          from: "Promptmint <no-reply@localhost>",
          to: "ada@example.com",
          subject: "Verify your email",
          text: "…",
          html: "<p>…</p>",
          links: [{ label: "Verify", url: "http://localhost/verify?t=1" }],
          created_at: "2026-11-29T23:14:05.123Z",
        },
      ],
    });
    expect(html).toContain('<time datetime="2026-11-29T23:14:05.123Z">29 Nov 2026, 23:14 UTC</time>');
    expect(html).not.toMatch(/>2026-11-29T23:14/);
  });
});
