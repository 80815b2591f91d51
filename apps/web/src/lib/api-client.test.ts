import { afterEach, describe, expect, it, vi } from "vitest";
import { jsonResponse, stubFetch } from "../test/fetch-stub";
import {
  ApiClientError,
  apiDownload,
  apiRequest,
  FALLBACK_ERROR_MESSAGE,
  fileNameOf,
  getErrorMessage,
  messageFromBody,
  setAccessTokenProvider,
  setUnauthorizedHandler,
} from "./api-client";

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the request to fail");
}

describe("api client", () => {
  afterEach(() => {
    setAccessTokenProvider(null);
    setUnauthorizedHandler(null);
  });

  it("answers a 401 by renewing the token once and sending the request again", async () => {
    setAccessTokenProvider(async () => "stale-token");
    const renew = vi.fn(async () => "renewed-token");
    setUnauthorizedHandler(renew);
    const api = stubFetch({
      "POST /api/things/": ({ headers }) =>
        headers.get("Authorization") === "Bearer renewed-token"
          ? jsonResponse({ ok: true }, 201)
          : jsonResponse({ code: "unauthorized", message: "Token expired" }, 401),
    });

    await expect(apiRequest("/things/", { method: "POST", body: { name: "x" } })).resolves.toEqual({
      ok: true,
    });
    expect(renew).toHaveBeenCalledExactlyOnceWith("stale-token");
    const calls = api.callsTo("POST /api/things/");
    expect(calls.map((call) => call.headers.get("Authorization"))).toEqual([
      "Bearer stale-token",
      "Bearer renewed-token",
    ]);
    expect(calls[1]?.body).toEqual({ name: "x" });
  });

  it("gives up after one retry, without one when nothing renews, and never for a token it was given", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => undefined);
    setAccessTokenProvider(async () => "stale-token");
    const renew = vi.fn(async (): Promise<string | undefined> => "renewed-token");
    setUnauthorizedHandler(renew);
    const api = stubFetch({ "GET /api/a": () => jsonResponse({ message: "Token expired" }, 401) });

    const refused = await failureOf(apiRequest("/a"));
    expect(refused).toMatchObject({ status: 401 });
    expect(api.callsTo("GET /api/a")).toHaveLength(2);

    renew.mockResolvedValueOnce(undefined);
    await failureOf(apiRequest("/a"));
    expect(api.callsTo("GET /api/a")).toHaveLength(3);

    await failureOf(apiRequest("/a", { token: "caller-token" }));
    expect(api.callsTo("GET /api/a")).toHaveLength(4);
    expect(renew).toHaveBeenCalledTimes(2);
  });

  it("retries a download refused with 401 with the renewed token", async () => {
    setAccessTokenProvider(async () => "stale-token");
    setUnauthorizedHandler(async () => "renewed-token");
    stubFetch({
      "GET /api/app/x/download-frontend": ({ headers }) =>
        headers.get("Authorization") === "Bearer renewed-token"
          ? new Response("zip", { headers: { "Content-Disposition": 'attachment; filename="x.zip"' } })
          : jsonResponse({ message: "Token expired" }, 401),
    });

    expect((await apiDownload("/app/x/download-frontend")).fileName).toBe("x.zip");
  });

  it("sends JSON to /api with the bearer token and returns the parsed answer", async () => {
    window.localStorage.setItem("token", "stored-token");
    const api = stubFetch({ "PATCH /api/things/1/": () => jsonResponse({ ok: true }) });

    await expect(apiRequest("/things/1/", { method: "PATCH", body: { name: "x" } })).resolves.toEqual({
      ok: true,
    });

    const [request] = api.callsTo("PATCH /api/things/1/");
    expect(request?.headers.get("Authorization")).toBe("Bearer stored-token");
    expect(request?.headers.get("Content-Type")).toBe("application/json");
    expect(request?.body).toEqual({ name: "x" });
  });

  it("prefers the registered token provider, and sends no token when told to", async () => {
    setAccessTokenProvider(async () => "fresh-token");
    const api = stubFetch({ "GET /api/a": () => jsonResponse({}), "GET /api/b": () => jsonResponse({}) });

    await apiRequest("/a");
    await apiRequest("/b", { token: null });

    expect(api.callsTo("GET /api/a")[0]?.headers.get("Authorization")).toBe("Bearer fresh-token");
    expect(api.callsTo("GET /api/b")[0]?.headers.has("Authorization")).toBe(false);
  });

  it("takes the message from detail, then message, then error", () => {
    expect(messageFromBody({ detail: "d", message: "m", error: "e" })).toBe("d");
    expect(messageFromBody({ message: "m", error: "e" })).toBe("m");
    expect(messageFromBody({ error: "e" })).toBe("e");
    expect(messageFromBody({ detail: "", message: "m" })).toBe("m");
    expect(messageFromBody("plain text")).toBeUndefined();
  });

  it("raises the server's message with its code, status and field errors", async () => {
    stubFetch({
      "PATCH /api/auth/profile/": () =>
        jsonResponse(
          {
            code: "validation",
            message: "Invalid profile",
            status: 400,
            fields: { "user.username": "taken" },
          },
          400,
        ),
    });

    const error = await failureOf(apiRequest("/auth/profile/", { method: "PATCH", body: {} }));

    expect(error).toBeInstanceOf(ApiClientError);
    const apiError = error as ApiClientError;
    expect(apiError.message).toBe("Invalid profile");
    expect(apiError.status).toBe(400);
    expect(apiError.code).toBe("validation");
    expect(apiError.fields).toEqual({ "user.username": "taken" });
    expect(getErrorMessage(error)).toBe("Invalid profile");
  });

  it("falls back to the client's own message, then to the generic one", async () => {
    stubFetch({ "GET /api/broken": () => new Response("", { status: 502 }) });

    const error = await failureOf(apiRequest("/broken"));

    expect(getErrorMessage(error)).toBe("Request failed with status code 502");
    expect(getErrorMessage(new TypeError("Failed to fetch"))).toBe("Failed to fetch");
    expect(getErrorMessage(new Error(""))).toBe(FALLBACK_ERROR_MESSAGE);
    expect(getErrorMessage("weird")).toBe("An unexpected error occurred");
  });

  it("only logs a 401 and passes the error on", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    stubFetch({
      "GET /api/auth/profile/": () => jsonResponse({ code: "unauthorized", message: "No token" }, 401),
    });

    const error = await failureOf(apiRequest("/auth/profile/"));

    expect(error).toBeInstanceOf(ApiClientError);
    expect((error as ApiClientError).status).toBe(401);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]?.[0])).toContain("401");
    warn.mockRestore();
  });

  it("validates the answer with the given schema", async () => {
    stubFetch({ "GET /api/n": () => jsonResponse({ n: "1" }) });
    const schema = {
      parse(data: unknown) {
        const value = (data as { n: unknown }).n;
        if (typeof value !== "number") throw new Error("n must be a number");
        return value;
      },
    };

    await expect(apiRequest("/n", { schema })).rejects.toThrow("n must be a number");
  });

  it("downloads a binary answer with the bearer token, and fails with the server's message", async () => {
    window.localStorage.setItem("token", "stored-token");
    const api = stubFetch({
      "GET /api/app/a/download-frontend?type=chat": () =>
        new Response("PK zip", {
          status: 200,
          headers: { "Content-Disposition": 'attachment; filename="a-chat-app.zip"' },
        }),
      "GET /api/app/b/download-frontend?type=completion": () =>
        jsonResponse({ code: "not_found", message: "Application not found", status: 404 }, 404),
    });

    const { blob, fileName } = await apiDownload("/app/a/download-frontend?type=chat");
    expect(await blob.text()).toBe("PK zip");
    expect(fileName).toBe("a-chat-app.zip");
    expect(api.requests[0]?.headers.get("Authorization")).toBe("Bearer stored-token");

    const error = await failureOf(apiDownload("/app/b/download-frontend?type=completion"));
    expect(error).toBeInstanceOf(ApiClientError);
    expect((error as ApiClientError).message).toBe("Application not found");
  });

  it("reads the file name of a Content-Disposition header, quoted, plain or UTF-8 encoded, without a path", () => {
    expect(fileNameOf('attachment; filename="tea-chat-app.zip"')).toBe("tea-chat-app.zip");
    expect(fileNameOf("attachment; filename=tea.zip; size=3")).toBe("tea.zip");
    expect(fileNameOf("attachment; filename*=UTF-8''t%C3%A9-app.zip")).toBe("té-app.zip");
    expect(fileNameOf('attachment; filename="../../etc/passwd"')).toBe("passwd");
    expect(fileNameOf("attachment")).toBeUndefined();
    expect(fileNameOf(null)).toBeUndefined();
  });
});
