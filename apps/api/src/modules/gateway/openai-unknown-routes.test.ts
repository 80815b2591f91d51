import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerUnknownRoutes } from "./openai-unknown-routes.ts";

// The production server also serves the SPA, whose history fallback is a `GET /*` route (web.ts)
// that answered every unknown GET under /api/v1 in the product API's shape. The API's test servers
// do not serve the SPA, so this builds the same routing: the fallback, then the OpenAI scope.
const app = Fastify();

beforeAll(async () => {
  app.get("/*", (request, reply) => {
    const url = request.url.split("?")[0] ?? "";
    if (url.startsWith("/api/")) return reply.status(404).send({ code: "not_found", status: 404 });
    return reply.type("text/html").send("<!doctype html><div id=root></div>");
  });
  await app.register(
    async (v1) => {
      answerUnknownRoutes(v1);
      v1.post("/chat/completions", async () => ({ ok: true }));
      v1.get("/responses/:id", async () => ({ ok: true }));
    },
    { prefix: "/api/v1" },
  );
  await app.ready();
});
afterAll(() => app.close());

describe("unknown /api/v1 routes beside the SPA's fallback", () => {
  it("answers an unknown GET in OpenAI's shape, not the fallback's", async () => {
    const answer = await app.inject({ method: "GET", url: "/api/v1/vector_stores/vs_1?limit=2" });
    expect(answer.statusCode).toBe(404);
    expect(answer.json()).toEqual({
      error: {
        message: "Unknown request URL: GET /api/v1/vector_stores/vs_1",
        type: "invalid_request_error",
        param: null,
        code: "unknown_url",
      },
    });
  });

  it("answers a served path's other methods 405 with Allow, GET included", async () => {
    const answer = await app.inject({ method: "GET", url: "/api/v1/chat/completions" });
    expect(answer.statusCode).toBe(405);
    expect(answer.headers.allow).toBe("POST");
    expect(answer.json().error.code).toBe("method_not_allowed");
    const deleted = await app.inject({ method: "DELETE", url: "/api/v1/chat/completions" });
    expect(deleted.statusCode).toBe(405);
  });

  it("keeps Dify's shape under /api/v1/app/ and leaves the SPA's pages and the served routes alone", async () => {
    const dify = await app.inject({ method: "GET", url: "/api/v1/app/some-app/no-such-route" });
    expect(dify.json()).toMatchObject({ code: "not_found", status: 404 });
    const page = await app.inject({ method: "GET", url: "/dashboard" });
    expect(page.body).toContain("<div id=root>");
    const served = await app.inject({ method: "GET", url: "/api/v1/responses/resp_1" });
    expect(served.json()).toEqual({ ok: true });
  });
});
