import type { Caller } from "./caller.ts";

/**
 * A public prompt app of `owner`'s, live: created with `app`, its prompt patched with `prompt`, and
 * set live. A refused creation or status change throws with its status (the live check judges the prompt). `name` defaults to "App" plus a random suffix.
 */
export async function createLiveApp(
  owner: Caller,
  app: { name?: string; price_cents: number; interaction_mode?: "completion" | "chat" },
  prompt: Record<string, unknown>,
): Promise<{ slug: string; id: string }> {
  const name = app.name ?? `App ${Math.random().toString(36).slice(2, 7)}`;
  const created = await owner.api("POST", "/api/app/", { body: { ...app, name, visibility: "public" } });
  if (created.status !== 201) throw new Error(`creating ${name}: ${created.status}`);
  const slug = created.body.slug as string;
  await owner.api("PATCH", `/api/app/${slug}/prompt/`, { body: prompt });
  const live = await owner.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } });
  if (live.status !== 200) throw new Error(`setting ${slug} live: ${live.status}`);
  return { slug, id: created.body.id as string };
}
