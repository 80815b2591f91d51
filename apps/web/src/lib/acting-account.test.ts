import { ORGANIZATION_HEADER } from "@promptmint/contracts";
import { afterEach, describe, expect, it } from "vitest";
import { jsonResponse, stubFetch } from "../test/fetch-stub";
import {
  ACTING_ORGANIZATION_STORAGE_KEY,
  readActingOrganization,
  writeActingOrganization,
} from "./acting-account";
import { apiDownload, apiRequest, ORGANIZATION_HEADER_NAME, setAccessTokenProvider } from "./api-client";

const acme = { id: "org-1", name: "Acme", role: "developer" } as const;

function headerOf(api: ReturnType<typeof stubFetch>, key: string): string | null | undefined {
  return api.callsTo(key)[0]?.headers.get(ORGANIZATION_HEADER_NAME);
}

describe("the acting account's header", () => {
  afterEach(() => setAccessTokenProvider(null));

  it("is the contracts' header", () => {
    expect(ORGANIZATION_HEADER_NAME.toLowerCase()).toBe(ORGANIZATION_HEADER);
  });

  it("names the organization on the account's requests, and not on the person's own", async () => {
    setAccessTokenProvider(() => "session-token");
    writeActingOrganization(acme);
    const ok = () => jsonResponse({});
    const person = [
      "GET /api/auth/profile/",
      "GET /api/auth/roles/",
      "GET /api/organizations/",
      "GET /api/organizations/org-1/members/",
      "GET /api/invitations/abc/",
      "POST /api/invitations/abc/accept/",
      "GET /api/admin/access",
    ];
    const account = [
      "GET /api/wallet/",
      "GET /api/app/",
      "POST /api/api-keys/",
      "GET /api/analytics/figures/?days=30",
    ];
    const api = stubFetch(Object.fromEntries([...person, ...account].map((key) => [key, ok])));

    for (const key of [...person, ...account]) {
      const [method, path] = key.split(" ") as ["GET" | "POST", string];
      await apiRequest(path.slice("/api".length), { method });
    }

    for (const key of person) expect(headerOf(api, key), key).toBeNull();
    for (const key of account) expect(headerOf(api, key), key).toBe("org-1");
  });

  it("also goes with downloads (a usage export), and not with an anonymous request", async () => {
    setAccessTokenProvider(() => "session-token");
    writeActingOrganization(acme);
    const api = stubFetch({
      "GET /api/wallet/export": () => new Response("a,b", { status: 200 }),
      "GET /api/config": () => jsonResponse({}),
    });

    await apiDownload("/wallet/export");
    await apiRequest("/config", { token: null });

    expect(headerOf(api, "GET /api/wallet/export")).toBe("org-1");
    expect(headerOf(api, "GET /api/config")).toBeNull();
  });

  it("is not sent while the person acts for themselves", async () => {
    setAccessTokenProvider(() => "session-token");
    writeActingOrganization(acme);
    writeActingOrganization(null);
    const api = stubFetch({ "GET /api/wallet/": () => jsonResponse({}) });

    await apiRequest("/wallet/");

    expect(headerOf(api, "GET /api/wallet/")).toBeNull();
    expect(window.localStorage.getItem(ACTING_ORGANIZATION_STORAGE_KEY)).toBeNull();
  });

  it("ignores a stored value that is not an organization (edited by hand, an older format)", () => {
    for (const text of ["not json", "null", '{"id":""}', '{"id":"x","name":"X","role":"emperor"}']) {
      window.localStorage.setItem(ACTING_ORGANIZATION_STORAGE_KEY, text);
      expect(readActingOrganization(), text).toBeNull();
    }
    window.localStorage.setItem(ACTING_ORGANIZATION_STORAGE_KEY, JSON.stringify(acme));
    expect(readActingOrganization()).toEqual(acme);
  });
});
