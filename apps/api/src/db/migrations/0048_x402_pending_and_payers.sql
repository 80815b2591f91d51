-- Decision 064: an x402 payment whose money reached us for an answer never given is `credited`
-- (kept for its payer), with the transaction that moved it.
ALTER TABLE "x402_payments" DROP CONSTRAINT "x402_payments_status";--> statement-breakpoint
ALTER TABLE "x402_payments" ADD CONSTRAINT "x402_payments_status" CHECK ("status" in ('verified', 'settling', 'settled', 'credited', 'failed', 'unpaid'));--> statement-breakpoint
ALTER TABLE "x402_payments" ADD CONSTRAINT "x402_payments_credited_has_transaction" CHECK ("status" <> 'credited' or "tx_hash" is not null);--> statement-breakpoint
-- Payer identities in their own namespace: `x402:<network>:<address>`, a username no one can
-- choose (usernames are letters, digits and @ . + - _), so no user can take a payer's name first.
UPDATE "users" SET "username" = 'x402:' || "subject", "updated_at" = now() WHERE "issuer" = 'x402';
