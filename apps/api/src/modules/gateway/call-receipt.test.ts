import type { FastifyRequest } from "fastify";
import { describe, expect, it, vi } from "vitest";
import type { ApplicationRow } from "../../db/schema/index.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import type { CallReceipt, ReceiptSigner } from "../billing/call-receipts-signing.ts";
import { signCallReceipt } from "./call-receipt.ts";
import type { CallCharge } from "./paid-call.ts";

// Which ended calls get a receipt and what it says (docs/decisions/073), with a recording signer:
// paid ones only (wallet, x402, a plan's included call), never the owner's, a free or a failed
// call; a signer that fails leaves the answer without one.

const application = {
  id: "0b9c1b7e-1111-4a4a-9a9a-000000000001",
  slug: "haiku",
  priceCents: 9,
  pendingPriceCents: null,
  pendingPriceAt: null,
} as unknown as ApplicationRow;
const person = { id: "user-1", issuer: "https://issuer.test", username: "ada" } as LocalUser;
const payer = { id: "user-2", issuer: "x402", username: "x402:eip155:8453:0xab" } as LocalUser;
const log = { error: vi.fn() };
const request = { log } as unknown as FastifyRequest;

function recording(fail = false) {
  const signed: CallReceipt[] = [];
  const signer: ReceiptSigner = {
    async sign(receipt) {
      if (fail) throw new Error("database gone");
      signed.push(receipt);
      return "signed.receipt.token";
    },
    jwks: async () => ({ keys: [] }),
    rotate: async () => "kid",
  };
  return { signer, signed };
}

const sign = (signer: ReceiptSigner | undefined, charge: CallCharge, caller = person, priceCents?: number) =>
  signCallReceipt({ receipts: signer }, request, {
    caller,
    application,
    execution: { served: { version: 4 } as never },
    messageId: "call-1",
    charge,
    priceCents,
  });

describe("signCallReceipt", () => {
  it("a wallet call → signed with the charge as its price, the person named by id only", async () => {
    const { signer, signed } = recording();
    expect(await sign(signer, { chargedCents: 9, paidBy: "wallet" })).toBe("signed.receipt.token");
    expect(signed[0]).toMatchObject({
      invocationId: "call-1",
      app: { id: application.id, slug: "haiku", version: 4 },
      priceCents: 9,
      chargedCents: 9,
      paidBy: "wallet",
      payer: { userId: "user-1" },
    });
    expect(signed[0]?.payer).not.toHaveProperty("label");
  });

  it("an x402 call → the authorized price and the payer's label", async () => {
    const { signer, signed } = recording();
    await sign(signer, { chargedCents: 7, paidBy: "x402" }, payer, 7);
    expect(signed[0]).toMatchObject({
      priceCents: 7,
      paidBy: "x402",
      payer: { userId: "user-2", label: payer.username },
    });
  });

  it("a plan's included call → signed, charged 0 at the app's price", async () => {
    const { signer, signed } = recording();
    expect(await sign(signer, { chargedCents: 0, paidBy: "plan" })).toBeDefined();
    expect(signed[0]).toMatchObject({ paidBy: "plan", chargedCents: 0, priceCents: 9 });
  });

  it("the owner's call, a free one, a failed one, or no signer → no receipt, nothing signed", async () => {
    const { signer, signed } = recording();
    for (const paidBy of ["owner", "free", "none"] as const)
      expect(await sign(signer, { chargedCents: 0, paidBy })).toBeUndefined();
    expect(signed).toEqual([]);
    expect(await sign(undefined, { chargedCents: 9, paidBy: "wallet" })).toBeUndefined();
  });

  it("a signer that fails → no receipt, the failure logged, nothing thrown", async () => {
    const { signer } = recording(true);
    await expect(sign(signer, { chargedCents: 9, paidBy: "wallet" })).resolves.toBeUndefined();
    expect(log.error).toHaveBeenCalledWith(
      expect.objectContaining({ invocation: "call-1" }),
      expect.any(String),
    );
  });
});
