import type { Profile } from "@promptmint/contracts";
import { useQuery } from "@tanstack/react-query";
import type { User as OidcUser } from "oidc-client-ts";
import { useAuth } from "react-oidc-context";
import { apiRequest } from "./api-client";

/** The signed-in person's profile; the sign-in callback and profile edits write here too. */
export const profileQueryKey = ["profile"] as const;

/**
 * The profile's schema, loaded when first needed: only signed-in people read a profile, so zod
 * stays out of the first load of the public pages (bench/web).
 */
export async function loadProfileSchema() {
  return (await import("@promptmint/contracts/auth")).ProfileSchema;
}

export async function fetchProfile(signal?: AbortSignal): Promise<Profile> {
  return apiRequest("/auth/profile/", { schema: await loadProfileSchema(), signal });
}

/** `GET /api/auth/profile/` while signed in; reloaded by the auth provider when the user changes. */
export function useProfile() {
  const auth = useAuth();
  return useQuery({
    queryKey: profileQueryKey,
    queryFn: ({ signal }) => fetchProfile(signal),
    enabled: auth.isAuthenticated,
  });
}

export interface SessionIdentity {
  name: string;
  email: string;
  initial: string;
}

/**
 * Who is signed in, for greetings and the user menu: the profile once loaded, the identity
 * token's claims before that (SPEC §3).
 */
export function describeSession(
  profile: Profile | undefined,
  oidcUser: OidcUser | null | undefined,
): SessionIdentity {
  const user = profile?.user;
  const claims = oidcUser?.profile;
  const fullName = user ? `${user.first_name} ${user.last_name}`.trim() : "";
  const email = user?.email || claims?.email || "";
  const name =
    user?.display_name ||
    fullName ||
    user?.username ||
    claims?.name ||
    claims?.preferred_username ||
    email ||
    "there";
  const initialSource = user?.display_name || claims?.name || email || name;
  return { name, email, initial: initialSource.trim().charAt(0).toUpperCase() || "?" };
}
