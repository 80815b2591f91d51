import type { Profile } from "@promptmint/contracts";
import { jsonResponse, stubFetch } from "./fetch-stub";
import { profileFixture } from "./fixtures";

type Handlers = Parameters<typeof stubFetch>[0];

/** The API as a signed-in person sees it: their profile, plus any extra handlers. */
export function stubSignedInApi(handlers: Handlers = {}, profile: Profile = profileFixture()) {
  return stubFetch({ "GET /api/auth/profile/": () => jsonResponse(profile), ...handlers });
}
