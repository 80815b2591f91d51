import type { Profile, RuntimeConfig } from "@promptmint/contracts";

export function profileFixture(overrides: { creator?: Profile["creator"] } = {}): Profile {
  return {
    user: {
      id: "5f8d0d55-1a2b-4c3d-8e9f-0123456789ab",
      username: "ada",
      email: "ada@example.com",
      first_name: "Ada",
      last_name: "Lovelace",
      display_name: "Ada L.",
      is_active: true,
      date_joined: "2024-03-15T10:00:00.000Z",
    },
    creator:
      overrides.creator === undefined
        ? { id: "c-1", display_name: "Ada L.", plan: "pro", credits: 1500 }
        : overrides.creator,
  };
}

export function runtimeConfigFixture(oidc: Partial<RuntimeConfig["oidc"]> = {}): RuntimeConfig {
  return {
    public_url: "http://localhost:3000",
    oidc: {
      issuer: "http://localhost:3000/oidc",
      client_id: "promptmint-web",
      audience: null,
      scope: "openid profile email offline_access",
      embedded: true,
      ...oidc,
    },
    sandbox: { llm: true, payments: true },
  };
}
