import os from "node:os";
import type { Database } from "../db/client.ts";
import type { SecretBox } from "../lib/secrets.ts";
import type { Actor } from "../modules/admin/audit.ts";
import { grantOperator, listOperators, revokeOperator } from "../modules/admin/operators.ts";
import {
  createReceiptSigner,
  listReceiptKeys,
  retireReceiptKey,
} from "../modules/billing/call-receipts-signing.ts";

const USAGE = `Usage: npm run admin -- <command>
  grant EMAIL              make the verified user with this address an operator (/admin)
  revoke EMAIL             take the operator role away
  list                     the current operators
  receipt-keys             the call receipts' signing keys (docs/decisions/073)
  rotate-receipt-key       add a receipt signing key that signs from now on (the older stay published)
  retire-receipt-key KID   stop publishing a key: the receipts it signed no longer verify`;

/** Who ran the command, as the audit log names them. */
export const cliActor = (): Actor => ({ id: null, email: `npm run admin (${os.userInfo().username})` });

/**
 * `npm run admin -- grant|revoke EMAIL | list` (docs/decisions/041): answers the exit code and
 * the lines to print. Every grant and revoke is in the audit log; an unknown or unverified
 * address is refused, never granted.
 */
export async function runAdminCommand(
  db: Database,
  args: string[],
  actor: Actor = cliActor(),
  /** SECRET_KEY's box, to seal a new receipt signing key (`rotate-receipt-key`). */
  secrets?: SecretBox,
): Promise<{ exitCode: number; lines: string[] }> {
  const [command, email, ...rest] = args;
  if (command === "receipt-keys" && email === undefined) {
    const keys = await listReceiptKeys(db);
    if (keys.length === 0) return { exitCode: 0, lines: ["No receipt signing key yet (made on first use)."] };
    return {
      exitCode: 0,
      lines: keys.map(
        (key) =>
          `${key.kid}  generation ${key.generation}  created ${key.createdAt.toISOString()}${key.retiredAt ? `  retired ${key.retiredAt.toISOString()}` : ""}`,
      ),
    };
  }
  if (command === "rotate-receipt-key" && email === undefined && secrets) {
    const kid = await createReceiptSigner(db, secrets, { issuer: "" }).rotate();
    return {
      exitCode: 0,
      lines: [`Added receipt signing key ${kid}: it signs from now on (running servers within a minute).`],
    };
  }
  if (command === "retire-receipt-key" && email && rest.length === 0) {
    const keys = await listReceiptKeys(db);
    const key = keys.find((candidate) => candidate.kid === email);
    if (!key) return { exitCode: 1, lines: [`No receipt signing key ${email}.`] };
    if (
      !keys.some(
        (other) => other.kid !== key.kid && other.retiredAt === null && other.generation > key.generation,
      )
    )
      return {
        exitCode: 1,
        lines: [`${email} is the newest key: rotate first (npm run admin -- rotate-receipt-key).`],
      };
    await retireReceiptKey(db, email);
    return { exitCode: 0, lines: [`Retired receipt signing key ${email}: no longer published.`] };
  }
  if (command === "list" && email === undefined) {
    const operators = await listOperators(db);
    if (operators.length === 0) return { exitCode: 0, lines: ["No operators yet."] };
    return {
      exitCode: 0,
      lines: operators.map(
        (row) => `${row.email}  granted ${row.grantedAt.toISOString()} by ${row.grantedBy}`,
      ),
    };
  }
  if ((command === "grant" || command === "revoke") && email && rest.length === 0) {
    if (!/^[^\s@]+@[^\s@]+$/.test(email))
      return { exitCode: 2, lines: [`"${email}" is not an email address.`, USAGE] };
    const result =
      command === "grant" ? await grantOperator(db, email, actor) : await revokeOperator(db, email, actor);
    if (!result.ok) return { exitCode: 1, lines: [result.message] };
    const lines = [
      ...result.changed.map(
        (user) => `${command === "grant" ? "Granted" : "Revoked"} operator: ${user.email} (user ${user.id})`,
      ),
      ...result.unchanged.map(
        (user) =>
          `${user.email} (user ${user.id}) ${command === "grant" ? "is already an operator" : "was not an operator"}`,
      ),
    ];
    return { exitCode: 0, lines };
  }
  return { exitCode: 2, lines: [USAGE] };
}
