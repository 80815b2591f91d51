import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../db/client.ts";

/**
 * Decision 065: a refresh token presented again within its reuse grace (oidc-adapter.ts) is
 * answered with the successor its first use got, not a new one, so one grant never has two live
 * chains. oidc-provider mints a successor on every rotation; this keeps the first and deletes the
 * others.
 *
 * The first successor is kept in the rotated token's row, sealed (AES-256-GCM) with a key derived
 * from the rotated token itself: a read of the table still yields nothing redeemable (only hashes
 * and ciphertext), and only whoever presents the rotated token can open it, who could redeem it
 * within the grace anyway.
 */

const SEAL_INFO = "promptmint refresh-token successor";

function keyOf(token: string): Buffer {
  return Buffer.from(hkdfSync("sha256", token, "", SEAL_INFO, 32));
}

/** The adapter's row id of a refresh token (its SHA-256, as oidc-adapter.ts stores credentials). */
function rowId(token: string): string {
  return createHash("sha256").update(token).digest("base64url");
}

export function sealSuccessor(rotated: string, successor: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyOf(rotated), iv);
  const sealed = Buffer.concat([cipher.update(successor, "utf8"), cipher.final()]);
  return [iv, sealed, cipher.getAuthTag()].map((part) => part.toString("base64url")).join(".");
}

export function openSuccessor(rotated: string, sealed: string): string | undefined {
  const [iv, data, tag] = sealed.split(".").map((part) => Buffer.from(part, "base64url"));
  if (!iv || !data || !tag) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyOf(rotated), iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(data), decipher.final()]).toString("utf8");
  } catch {
    return undefined;
  }
}

/**
 * The refresh token to answer a rotation of `rotated` with: `issued` (just minted) if this is
 * the rotated token's first use, else the successor its first use got, `issued` then deleted.
 * The first use is decided by one conditional update, so two uses at once agree on one successor.
 */
export async function keepOneSuccessor(db: Database, rotated: string, issued: string): Promise<string> {
  const claimed = await queryRows<{ id: string }>(
    db,
    sql`update oidc_payloads set payload = payload || jsonb_build_object('successor', ${sealSuccessor(rotated, issued)}::text)
        where model = 'RefreshToken' and id = ${rowId(rotated)} and payload->>'successor' is null
        returning id`,
  );
  if (claimed.length > 0) return issued;
  const [row] = await queryRows<{ successor: string | null }>(
    db,
    sql`select payload->>'successor' as successor from oidc_payloads
        where model = 'RefreshToken' and id = ${rowId(rotated)}`,
  );
  const successor = row?.successor ? openSuccessor(rotated, row.successor) : undefined;
  // The rotated token's row is gone (its grant revoked meanwhile): nothing to share.
  if (!successor) return issued;
  await db.execute(sql`delete from oidc_payloads where model = 'RefreshToken' and id = ${rowId(issued)}`);
  return successor;
}
