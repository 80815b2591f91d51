import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "../../db/client.ts";
import { receiptSigningKeys } from "../../db/schema/index.ts";
import { createSecretBox } from "../../lib/secrets.ts";
import { runAdminCommand } from "../../scripts/admin-command.ts";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import {
  type CallReceipt,
  createReceiptSigner,
  listReceiptKeys,
  retireReceiptKey,
  verifyReceipt,
} from "./call-receipts-signing.ts";

// The receipts' signer on a real database (docs/decisions/073): the key made once and sealed, the
// JWKS that verifies what it signs, a rotation that keeps old receipts verifiable, tampering and
// the wrong key refused.

let testDb: TestDatabase;
let handle: DatabaseHandle;
const secrets = createSecretBox("receipt-test-secret-key-0123456789");
const issuer = "https://promptmint.test";

beforeAll(async () => {
  testDb = await createTestDatabase();
  handle = await testDb.open();
});
afterAll(async () => {
  await handle?.close();
  await testDb?.destroy();
});

const receipt = (overrides: Partial<CallReceipt> = {}): CallReceipt => ({
  invocationId: randomUUID(),
  app: { id: randomUUID(), slug: "haiku-writer", version: 3 },
  priceCents: 7,
  chargedCents: 7,
  paidBy: "wallet",
  payer: { userId: randomUUID() },
  at: new Date("2026-11-29T12:00:00Z"),
  ...overrides,
});

describe("createReceiptSigner", () => {
  it("signs with one key made on first use, sealed at rest, that its JWKS verifies", async () => {
    const signer = createReceiptSigner(handle.db, secrets, { issuer });
    const one = receipt({ paidBy: "x402", payer: { userId: randomUUID(), label: "x402:eip155:84532:0xab" } });
    const token = await signer.sign(one);
    const [header] = token.split(".");
    expect(JSON.parse(Buffer.from(header ?? "", "base64url").toString())).toMatchObject({
      alg: "EdDSA",
      typ: "promptmint-receipt+jwt",
    });
    const jwks = await signer.jwks();
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" });
    // Public halves only.
    expect(jwks.keys[0]).not.toHaveProperty("d");
    const claims = await verifyReceipt(token, jwks, { issuer });
    expect(claims).toMatchObject({
      iss: issuer,
      jti: one.invocationId,
      invocation_id: one.invocationId,
      app: one.app,
      price_cents: 7,
      charged_cents: 7,
      currency: "USD",
      paid_by: "x402",
      payer: { user_id: one.payer.userId, label: "x402:eip155:84532:0xab" },
      iat: Math.floor(one.at.getTime() / 1000),
    });
    // The private key is stored sealed: the row holds no plaintext JWK.
    const rows = await handle.db.select().from(receiptSigningKeys);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.sealedPrivateJwk.startsWith("v1.")).toBe(true);
    expect(rows[0]?.sealedPrivateJwk).not.toContain('"d"');
    // A second signer (another process) signs with the same key.
    const other = createReceiptSigner(handle.db, secrets, { issuer });
    const again = await other.sign(receipt());
    expect(JSON.parse(Buffer.from(again.split(".")[0] ?? "", "base64url").toString()).kid).toBe(
      jwks.keys[0]?.kid,
    );
    expect(await listReceiptKeys(handle.db)).toHaveLength(1);
  });

  it("a tampered receipt, another issuer, or a key not published → does not verify", async () => {
    const signer = createReceiptSigner(handle.db, secrets, { issuer });
    const token = await signer.sign(receipt({ chargedCents: 7 }));
    const jwks = await signer.jwks();
    const [header, payload, signature] = token.split(".");
    const claims = JSON.parse(Buffer.from(payload ?? "", "base64url").toString());
    const cheaper = Buffer.from(JSON.stringify({ ...claims, charged_cents: 1 })).toString("base64url");
    await expect(verifyReceipt(`${header}.${cheaper}.${signature}`, jwks)).rejects.toThrow();
    await expect(verifyReceipt(token, jwks, { issuer: "https://elsewhere.test" })).rejects.toThrow();
    // A key of another database (same kid shape) does not verify it.
    const elsewhere = await createTestDatabase();
    const otherHandle = await elsewhere.open();
    try {
      const stranger = createReceiptSigner(otherHandle.db, secrets, { issuer });
      await stranger.sign(receipt());
      const strangerKeys = await stranger.jwks();
      await expect(verifyReceipt(token, strangerKeys)).rejects.toThrow();
    } finally {
      await otherHandle.close();
      await elsewhere.destroy();
    }
    // Still verifies untouched.
    await expect(verifyReceipt(token, jwks)).resolves.toMatchObject({ charged_cents: 7 });
  });

  it("rotation: the new kid signs, the old receipts still verify until their key is retired", async () => {
    const signer = createReceiptSigner(handle.db, secrets, { issuer });
    const old = await signer.sign(receipt());
    const oldKid = JSON.parse(Buffer.from(old.split(".")[0] ?? "", "base64url").toString()).kid;
    const newKid = await signer.rotate();
    expect(newKid).not.toBe(oldKid);
    const fresh = await signer.sign(receipt());
    expect(JSON.parse(Buffer.from(fresh.split(".")[0] ?? "", "base64url").toString()).kid).toBe(newKid);
    const jwks = await signer.jwks();
    expect(jwks.keys.map((key) => key.kid)).toEqual([newKid, oldKid]);
    await expect(verifyReceipt(old, jwks)).resolves.toBeTruthy();
    await expect(verifyReceipt(fresh, jwks)).resolves.toBeTruthy();
    await retireReceiptKey(handle.db, oldKid);
    const after = await signer.jwks();
    expect(after.keys.map((key) => key.kid)).toEqual([newKid]);
    await expect(verifyReceipt(old, after)).rejects.toThrow();
  });

  it("another SECRET_KEY cannot unseal the key: signing fails loudly", async () => {
    const signer = createReceiptSigner(handle.db, createSecretBox("a-different-secret-key-987654321"), {
      issuer,
    });
    await expect(signer.sign(receipt())).rejects.toThrow(/cannot be decrypted/);
  });
});

describe("npm run admin -- receipt-keys | rotate-receipt-key | retire-receipt-key", () => {
  const actor = { id: null, email: "npm run admin (test)" };

  it("lists the keys, rotates, refuses to retire the newest, retires an older one", async () => {
    const before = await listReceiptKeys(handle.db);
    const listed = await runAdminCommand(handle.db, ["receipt-keys"], actor);
    expect(listed.exitCode).toBe(0);
    expect(listed.lines).toHaveLength(before.length);
    const rotated = await runAdminCommand(handle.db, ["rotate-receipt-key"], actor, secrets);
    expect(rotated.exitCode).toBe(0);
    const keys = await listReceiptKeys(handle.db);
    const newest = keys.at(-1);
    expect(keys).toHaveLength(before.length + 1);
    expect(rotated.lines[0]).toContain(newest?.kid);
    const refused = await runAdminCommand(handle.db, ["retire-receipt-key", newest?.kid ?? ""], actor);
    expect(refused).toMatchObject({ exitCode: 1, lines: [expect.stringContaining("rotate first")] });
    const older = keys.filter((key) => key.retiredAt === null).at(-2);
    const retired = await runAdminCommand(handle.db, ["retire-receipt-key", older?.kid ?? ""], actor);
    expect(retired.exitCode).toBe(0);
    const published = await createReceiptSigner(handle.db, secrets, { issuer }).jwks();
    expect(published.keys.map((key) => key.kid)).not.toContain(older?.kid);
    expect(published.keys.map((key) => key.kid)).toContain(newest?.kid);
    // Without SECRET_KEY's box there is nothing to seal a new key with: the usage, not a key.
    expect((await runAdminCommand(handle.db, ["rotate-receipt-key"], actor)).exitCode).toBe(2);
  });
});
