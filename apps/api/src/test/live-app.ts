import type { Caller } from "./caller.ts";

/**
 * A prompt app of `owner`'s as a creator makes one at any price: creating a prompt app is refused
 * below the starter model's floor (issue 32), so a cheaper price needs the cheaper model first. The
 * app is created at the default price, its prompt patched with `prompt`, and then priced at
 * `app.price_cents` (a draft's price changes at once). Throws with the status of any refused step.
 */
export async function createPromptApp(
  owner: Caller,
  app: Record<string, unknown> & { name: string; price_cents?: number },
  prompt?: Record<string, unknown>,
): Promise<{ slug: string; id: string; body: Record<string, unknown> }> {
  const { price_cents: price, ...rest } = app;
  const created = await owner.api("POST", "/api/app/", { body: rest });
  if (created.status !== 201)
    throw new Error(`creating ${app.name}: ${created.status} ${JSON.stringify(created.body)}`);
  const slug = created.body.slug as string;
  if (prompt) {
    const saved = await owner.api("PATCH", `/api/app/${slug}/prompt/`, { body: prompt });
    if (saved.status !== 200)
      throw new Error(`prompt of ${slug}: ${saved.status} ${JSON.stringify(saved.body)}`);
  }
  let body = created.body as Record<string, unknown>;
  if (price !== undefined && price !== body.price_cents) {
    const priced = await owner.api("PATCH", `/api/app/${slug}/`, { body: { price_cents: price } });
    if (priced.status !== 200)
      throw new Error(`pricing ${slug} at ${price}: ${priced.status} ${JSON.stringify(priced.body)}`);
    body = priced.body;
  }
  return { slug, id: body.id as string, body };
}

/**
 * A public prompt app of `owner`'s, live: created with `app` and its prompt (createPromptApp), and
 * set live. A refused step throws with its status (the live check judges the prompt). `name`
 * defaults to "App" plus a random suffix.
 */
export async function createLiveApp(
  owner: Caller,
  app: { name?: string; price_cents: number; interaction_mode?: "completion" | "chat" },
  prompt: Record<string, unknown>,
): Promise<{ slug: string; id: string }> {
  const name = app.name ?? `App ${Math.random().toString(36).slice(2, 7)}`;
  const { slug, id } = await createPromptApp(owner, { ...app, name, visibility: "public" }, prompt);
  const live = await owner.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } });
  if (live.status !== 200) throw new Error(`setting ${slug} live: ${live.status}`);
  return { slug, id };
}
