import type { Profile } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { loadProfileSchema } from "../../../lib/profile-query";

/** Why the person went to the identity provider; carried through it as the sign-in state. */
export type SignInIntent = "login" | "register";

export function signInIntentOf(state: unknown): SignInIntent {
  if (typeof state === "object" && state !== null && "intent" in state && state.intent === "register") {
    return "register";
  }
  return "login";
}

/**
 * After the identity provider signed the person in, tells our API: `POST /auth/register/`
 * after sign-up, `POST /auth/login/` otherwise. Answers the profile.
 */
export async function openServerSession(intent: SignInIntent, accessToken: string): Promise<Profile> {
  const path = intent === "register" ? "/auth/register/" : "/auth/login/";
  return apiRequest(path, { method: "POST", schema: await loadProfileSchema(), token: accessToken });
}

/** `POST /auth/logout/`. */
export function closeServerSession(): Promise<unknown> {
  return apiRequest("/auth/logout/", { method: "POST" });
}
