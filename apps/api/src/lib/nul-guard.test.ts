import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installErrorHandler } from "./error-handler.ts";
import { installNulGuard } from "./nul-guard.ts";

// Found by fuzzing: a NUL reached PostgreSQL (which cannot store it) and came back as a 500.
const app = Fastify();
let handled = 0;

beforeAll(async () => {
  installErrorHandler(app);
  installNulGuard(app);
  app.post("/things/:slug/", async () => {
    handled++;
    return { ok: true };
  });
  await app.ready();
});
afterAll(() => app.close());

const post = (url: string, payload: unknown) =>
  app.inject({
    method: "POST",
    url,
    payload: payload as object,
    headers: { "content-type": "application/json" },
  });

describe("the NUL guard", () => {
  it("refuses a NUL in a path parameter, a query value, a body value or a body key with 400 naming it", async () => {
    const cases: [string, unknown, string][] = [
      ["/things/a%00b/", {}, "slug"],
      ["/things/ok/?q=%00", {}, "q"],
      ["/things/ok/", { user: { name: "a\u0000b" } }, "user.name"],
      ["/things/ok/", { list: ["fine", "\u0000"] }, "list.1"],
      ["/things/ok/", { "k\u0000": 1 }, "k\\0"],
    ];
    for (const [url, body, field] of cases) {
      const answer = await post(url, body);
      expect(answer.statusCode, url).toBe(400);
      expect(answer.json().fields, url).toEqual({ [field]: "must not contain NUL characters" });
    }
    expect(handled).toBe(0);
  });

  it("lets everything else through", async () => {
    const answer = await post("/things/ok/?q=%E2%9C%93", { name: "✓ fine", nested: { deep: ["x"] } });
    expect(answer.statusCode).toBe(200);
    expect(handled).toBe(1);
  });
});
