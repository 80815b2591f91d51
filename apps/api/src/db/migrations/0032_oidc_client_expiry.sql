-- Dynamically registered clients stored before registrations expired (docs/decisions/042): one
-- that obtained a grant lives 30 days from now (each new token extends it), one that never did
-- is gone in a day, as a new registration would be.
UPDATE "oidc_payloads" SET "expires_at" = now() + interval '30 days'
WHERE "model" = 'Client' AND "expires_at" IS NULL
  AND EXISTS (
    SELECT 1 FROM "oidc_payloads" AS "grant"
    WHERE "grant"."model" = 'Grant' AND "grant"."payload"->>'clientId' = "oidc_payloads"."id"
  );--> statement-breakpoint
UPDATE "oidc_payloads" SET "expires_at" = now() + interval '24 hours'
WHERE "model" = 'Client' AND "expires_at" IS NULL;
