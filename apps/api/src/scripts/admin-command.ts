import os from "node:os";
import type { Database } from "../db/client.ts";
import type { Actor } from "../modules/admin/audit.ts";
import { grantOperator, listOperators, revokeOperator } from "../modules/admin/operators.ts";

const USAGE = `Usage: npm run admin -- <command>
  grant EMAIL    make the verified user with this address an operator (/admin)
  revoke EMAIL   take the operator role away
  list           the current operators`;

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
): Promise<{ exitCode: number; lines: string[] }> {
  const [command, email, ...rest] = args;
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
