-- Identity you can trust (docs/decisions/041): the embedded issuer proves that a person owns
-- their email address (a link mailed to it) and resets passwords the same way; the API stores
-- the issuer's email_verified claim on the user; operator rights are a role stored here, not an
-- address in ADMIN_EMAILS. Existing accounts start unverified: nothing proved them.
ALTER TABLE "identity_accounts" ADD COLUMN "email_verified_at" timestamp with time zone;
--> statement-breakpoint
-- Single-use links mailed by the embedded issuer, stored as SHA-256 of the token, never the token.
CREATE TABLE "identity_tokens" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL REFERENCES "identity_accounts"("id") ON DELETE CASCADE,
	"purpose" text NOT NULL,
	"token_sha256" text NOT NULL,
	"email" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "identity_tokens_purpose" CHECK ("purpose" in ('verify_email', 'reset_password'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "identity_tokens_token_key" ON "identity_tokens" USING btree ("token_sha256");
--> statement-breakpoint
CREATE INDEX "identity_tokens_account_idx" ON "identity_tokens" USING btree ("account_id","purpose","created_at");
--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "email_verified" boolean DEFAULT false NOT NULL;
--> statement-breakpoint
-- A role granted to a user (only 'operator' so far). A revoked role keeps its row (revoked_at),
-- so the ADMIN_EMAILS bootstrap, which only ever adds a missing row, never grants it again.
CREATE TABLE "user_roles" (
	"user_id" uuid NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
	"role" text NOT NULL,
	"granted_by" text NOT NULL,
	"granted_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "user_roles_pkey" PRIMARY KEY ("user_id","role"),
	CONSTRAINT "user_roles_role" CHECK ("role" in ('operator'))
);
