import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "../../db/client.ts";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import { upsertUserFromToken } from "../auth/auth.service.ts";
import type { VerifiedToken } from "../auth/token-verifier.ts";
import { bootstrapOperator, grantOperator, isOperator } from "./operators.ts";

/**
 * Operator rights follow the address an issuer verified, exactly (docs/decisions/041). An external
 * issuer proves the address it names; lower-casing it with full Unicode rules could turn a
 * different mailbox into an ADMIN_EMAILS one: U+212A KELVIN SIGN lower-cases to an ASCII "k", so
 * "\u212Aen@…" (verified by its issuer as that mailbox) became "ken@…".
 */
let testDb: TestDatabase;
let handle: DatabaseHandle;
const ISSUER = "https://issuer.example";
const ADMIN = "ken@example.com";

const tokenFor = (subject: string, email: string): VerifiedToken => ({
  issuer: ISSUER,
  subject,
  claims: { sub: subject, email, email_verified: true },
  raw: "",
});

beforeAll(async () => {
  testDb = await createTestDatabase();
  handle = await testDb.open();
});
afterAll(async () => {
  await handle?.close();
  await testDb?.destroy();
});

describe("ADMIN_EMAILS and operator grants match the verified address itself", () => {
  it("does not make a Kelvin-sign look-alike of an ADMIN_EMAILS address an operator, by bootstrap or by grant", async () => {
    const lookAlike = await upsertUserFromToken(handle.db, tokenFor("look-alike", "\u212Aen@example.com"), {
      creator: false,
      refreshEmail: true,
    });
    expect(lookAlike.emailVerified).toBe(true);
    expect(lookAlike.email).not.toBe(ADMIN);
    expect(await bootstrapOperator(handle.db, [ADMIN], lookAlike)).toBe(false);
    expect(await isOperator(handle.db, lookAlike)).toBe(false);
    const grant = await grantOperator(handle.db, ADMIN, { id: null, email: "test" });
    expect(grant.ok).toBe(false);

    // The address itself, in any ASCII case, is the operator's.
    const owner = await upsertUserFromToken(handle.db, tokenFor("owner", "Ken@Example.COM"), {
      creator: false,
      refreshEmail: true,
    });
    expect(owner.email).toBe(ADMIN);
    expect(await bootstrapOperator(handle.db, [ADMIN], owner)).toBe(true);
    expect(await isOperator(handle.db, owner)).toBe(true);
    expect(await isOperator(handle.db, lookAlike)).toBe(false);
  });
});
