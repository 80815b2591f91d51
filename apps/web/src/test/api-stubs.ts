import type { Profile, SavePromptApplication } from "@promptmint/contracts";
import { jsonResponse, stubFetch } from "./fetch-stub";
import { profileFixture } from "./fixtures";

type Handlers = Parameters<typeof stubFetch>[0];

/**
 * The API as a signed-in person sees it: their profile, no organizations (the account switcher
 * reads them when opened), plus any extra handlers.
 */
export function stubSignedInApi(handlers: Handlers = {}, profile: Profile = profileFixture()) {
  return stubFetch({
    "GET /api/auth/profile/": () => jsonResponse(profile),
    "GET /api/organizations/": () => jsonResponse([]),
    ...handlers,
  });
}

/** The prompt builder's and editor's one save request for blog-writer (docs/decisions/036). */
export const SAVE_BLOG_WRITER = "PATCH /api/app/blog-writer/prompt-application/";

/** The body of the first save: the app's settings and its prompt. */
export function savedBody(api: ReturnType<typeof stubFetch>): SavePromptApplication {
  return api.callsTo(SAVE_BLOG_WRITER)[0]?.body as SavePromptApplication;
}
