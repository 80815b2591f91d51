import { and, eq, isNull, or } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, invocations } from "../../db/schema/index.ts";
import type { LocalUser } from "../auth/auth.service.ts";

/**
 * One of the caller's own calls to the app (its invocation; the message or run id Dify clients
 * hold), or undefined: another caller's is not found. With `user`, only that Dify end user's
 * successful calls count (a message to rate).
 */
export async function findOwnCall(
  db: Database,
  application: ApplicationRow,
  caller: LocalUser,
  id: string,
  message?: { user: string | undefined },
): Promise<typeof invocations.$inferSelect | undefined> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return undefined;
  const endUser = message?.user
    ? eq(invocations.endUser, message.user)
    : or(isNull(invocations.endUser), eq(invocations.endUser, ""));
  const [found] = await db
    .select()
    .from(invocations)
    .where(
      and(
        eq(invocations.id, id),
        eq(invocations.applicationId, application.id),
        eq(invocations.callerUserId, caller.id),
        message ? and(eq(invocations.status, "success"), endUser) : undefined,
      ),
    );
  return found;
}
