import type { ModelKey, ModelKeyProvider } from "@promptmint/contracts";
import { and, eq } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { creatorModelKeys } from "../../db/schema/index.ts";
import { AppError, notFound } from "../../lib/errors.ts";
import { maskSecret, type SecretBox } from "../../lib/secrets.ts";

/** Providers a creator may keep a key for: every provider of the model catalog (not the sandbox). */
export const MODEL_KEY_PROVIDERS: readonly ModelKeyProvider[] = ["openai", "anthropic", "google", "mistral"];

type Row = typeof creatorModelKeys.$inferSelect;

function present(provider: ModelKeyProvider, row: Row | undefined): ModelKey {
  return {
    provider,
    configured: Boolean(row),
    // The key is sealed; what responses show is '••••' and the last 4 characters kept beside it.
    masked_key: row ? `••••${row.last4}` : null,
    updated_at: row?.updatedAt.toISOString() ?? null,
  };
}

/** Every provider, with whether the creator has set a key for it (masked). */
export async function listModelKeys(db: Database, userId: string): Promise<ModelKey[]> {
  const rows = await db.select().from(creatorModelKeys).where(eq(creatorModelKeys.userId, userId));
  return MODEL_KEY_PROVIDERS.map((provider) =>
    present(
      provider,
      rows.find((row) => row.provider === provider),
    ),
  );
}

export async function getModelKey(
  db: Database,
  userId: string,
  provider: ModelKeyProvider,
): Promise<ModelKey> {
  const [row] = await db
    .select()
    .from(creatorModelKeys)
    .where(and(eq(creatorModelKeys.userId, userId), eq(creatorModelKeys.provider, provider)));
  return present(provider, row);
}

/** Sets or replaces the creator's key for a provider; stored AES-256-GCM sealed, never in plaintext. */
export async function putModelKey(
  db: Database,
  secrets: SecretBox,
  userId: string,
  provider: ModelKeyProvider,
  apiKey: string,
): Promise<ModelKey> {
  const now = new Date();
  const sealed = { keyEncrypted: secrets.encrypt(apiKey), last4: apiKey.slice(-4), updatedAt: now };
  const [row] = await db
    .insert(creatorModelKeys)
    .values({ userId, provider, ...sealed })
    .onConflictDoUpdate({ target: [creatorModelKeys.userId, creatorModelKeys.provider], set: sealed })
    .returning();
  return present(provider, row);
}

/**
 * Deletes the key. Apps set to the creator's keys for this provider then fail their calls with a
 * 503 naming the missing key (they are not switched to the platform's keys behind the creator's back).
 */
export async function deleteModelKey(
  db: Database,
  userId: string,
  provider: ModelKeyProvider,
): Promise<void> {
  const gone = await db
    .delete(creatorModelKeys)
    .where(and(eq(creatorModelKeys.userId, userId), eq(creatorModelKeys.provider, provider)))
    .returning({ provider: creatorModelKeys.provider });
  if (gone.length === 0) throw notFound(`A ${provider} key`);
}

/**
 * The creator's key for a call (decrypted; never leaves the server). A call of an app set to the
 * creator's keys without one fails: 503 naming the missing key.
 */
export async function creatorKeyFor(
  db: Database,
  secrets: SecretBox,
  userId: string,
  provider: ModelKeyProvider,
  modelId: string,
): Promise<string> {
  const [row] = await db
    .select({ keyEncrypted: creatorModelKeys.keyEncrypted })
    .from(creatorModelKeys)
    .where(and(eq(creatorModelKeys.userId, userId), eq(creatorModelKeys.provider, provider)))
    .limit(1);
  if (!row)
    throw new AppError(
      "unavailable",
      `This app runs on its creator's own ${provider} API key for ${modelId}, and none is set: the creator must add a ${provider} key (Profile → Model keys)`,
    );
  return secrets.decrypt(row.keyEncrypted);
}

export { maskSecret };
