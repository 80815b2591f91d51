import { hash, verify } from "@node-rs/argon2";
import { isUuid } from "@promptmint/contracts";
import { and, count, eq, gt, lt } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import { identityAccounts, signInFailures } from "../db/schema/index.ts";

// OWASP's argon2id baseline: 19 MiB, 2 iterations, 1 lane.
export const ARGON2 = { algorithm: 2 as const, memoryCost: 19456, timeCost: 2, parallelism: 1 };
const THROTTLE_WINDOW_MS = 15 * 60 * 1000;
const MAX_FAILURES_PER_EMAIL = 5;
const MAX_FAILURES_PER_IP = 30;
const COMMON_PASSWORDS = new Set([
  "password",
  "password1",
  "password123",
  "12345678",
  "123456789",
  "1234567890",
  "qwerty123",
  "iloveyou1",
  "letmein123",
  "welcome123",
  "admin123",
  "promptmint1",
]);

export interface IdentityAccount {
  id: string;
  email: string;
  displayName: string;
  /** The person opened a link mailed to `email` (identity/email-links.ts). */
  emailVerified: boolean;
}

const toAccount = (row: typeof identityAccounts.$inferSelect): IdentityAccount => ({
  id: row.id,
  email: row.email,
  displayName: row.displayName,
  emailVerified: row.emailVerifiedAt !== null,
});

export type SignInResult =
  | { ok: true; account: IdentityAccount }
  | { ok: false; reason: "invalid_credentials" | "throttled"; message: string };

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Problems with a sign-up form, keyed by field; empty when the form is acceptable. */
export function validateSignUp(input: {
  email: string;
  password: string;
  displayName: string;
}): Record<string, string> {
  const problems: Record<string, string> = {};
  const email = normalizeEmail(input.email);
  if (!input.displayName.trim()) problems.display_name = "Enter a display name.";
  else if (input.displayName.trim().length > 100)
    problems.display_name = "Display name must be at most 100 characters.";
  if (!EMAIL_PATTERN.test(email) || email.length > 254) problems.email = "Enter a valid email address.";
  const passwordProblem = describeWeakPassword(input.password, email);
  if (passwordProblem) problems.password = passwordProblem;
  return problems;
}

export function describeWeakPassword(password: string, email: string): string | undefined {
  if (password.length < 8) return "Password is too weak: use at least 8 characters.";
  if (password.length > 256) return "Password must be at most 256 characters.";
  if (!/[A-Za-z]/.test(password) || !/[0-9\W_]/.test(password)) {
    return "Password is too weak: mix letters with numbers or symbols.";
  }
  const lowered = password.toLowerCase();
  const local = email.split("@")[0] ?? "";
  if (COMMON_PASSWORDS.has(lowered) || (local.length >= 4 && lowered.includes(local))) {
    return "Password is too weak: it is too common or contains your email.";
  }
  return undefined;
}

export async function createAccount(
  db: Database,
  input: { email: string; password: string; displayName: string },
): Promise<{ ok: true; account: IdentityAccount } | { ok: false; problems: Record<string, string> }> {
  const problems = validateSignUp(input);
  if (Object.keys(problems).length > 0) return { ok: false, problems };
  const email = normalizeEmail(input.email);
  const passwordHash = await hash(input.password, ARGON2);
  const [row] = await db
    .insert(identityAccounts)
    .values({ email, passwordHash, displayName: input.displayName.trim() })
    .onConflictDoNothing()
    .returning();
  if (!row)
    return { ok: false, problems: { email: "An account with this email already exists. Sign in instead." } };
  return { ok: true, account: toAccount(row) };
}

// Verifying against a fixed hash for unknown emails keeps response time from revealing which emails exist.
let dummyHash: Promise<string> | undefined;

export async function signIn(
  db: Database,
  input: { email: string; password: string; ip: string },
): Promise<SignInResult> {
  const email = normalizeEmail(input.email);
  // The attempt is counted as a failure before the password is checked, and the limit is read
  // after: concurrent guesses cannot all pass a check made before any of them was recorded.
  const [attempt] = await db.insert(signInFailures).values({ email, ip: input.ip }).returning();
  if (await isThrottled(db, email, input.ip)) {
    // A refused attempt does not count on top of the failures that caused the refusal.
    if (attempt) await db.delete(signInFailures).where(eq(signInFailures.id, attempt.id));
    return {
      ok: false,
      reason: "throttled",
      message: "Too many failed sign-in attempts. Please wait 15 minutes and try again.",
    };
  }
  const [row] = await db.select().from(identityAccounts).where(eq(identityAccounts.email, email)).limit(1);
  dummyHash ??= hash("not-a-real-password", ARGON2);
  const valid = await verify(row?.passwordHash ?? (await dummyHash), input.password).catch(() => false);
  if (!row || !valid) {
    return { ok: false, reason: "invalid_credentials", message: "Incorrect email or password." };
  }
  await db.delete(signInFailures).where(eq(signInFailures.email, email));
  return { ok: true, account: toAccount(row) };
}

/** True when this attempt (already recorded) is past the limit for its email or its address. */
async function isThrottled(db: Database, email: string, ip: string): Promise<boolean> {
  const since = new Date(Date.now() - THROTTLE_WINDOW_MS);
  const [byEmail] = await db
    .select({ n: count() })
    .from(signInFailures)
    .where(and(eq(signInFailures.email, email), gt(signInFailures.failedAt, since)));
  if ((byEmail?.n ?? 0) > MAX_FAILURES_PER_EMAIL) return true;
  const [byIp] = await db
    .select({ n: count() })
    .from(signInFailures)
    .where(and(eq(signInFailures.ip, ip), gt(signInFailures.failedAt, since)));
  return (byIp?.n ?? 0) > MAX_FAILURES_PER_IP;
}

export async function findAccountById(db: Database, id: string): Promise<IdentityAccount | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await db.select().from(identityAccounts).where(eq(identityAccounts.id, id)).limit(1);
  return row ? toAccount(row) : undefined;
}

/** Old failure rows carry no information once outside the window. */
export async function deleteStaleSignInFailures(db: Database): Promise<void> {
  const before = new Date(Date.now() - THROTTLE_WINDOW_MS);
  await db.delete(signInFailures).where(lt(signInFailures.failedAt, before));
}
