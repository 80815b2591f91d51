-- Model cost (docs/decisions/026): a prompt app runs on the platform's model keys (the model cost
-- is taken from the creator's share) or on its creator's own keys (the vendor bills the creator).
ALTER TABLE "prompts" ADD COLUMN "model_keys" text DEFAULT 'platform' NOT NULL;--> statement-breakpoint
ALTER TABLE "prompts" ADD CONSTRAINT "prompts_model_keys_check" CHECK ("prompts"."model_keys" in ('platform', 'creator'));--> statement-breakpoint
-- A creator's own API key per model provider, AES-256-GCM sealed like workflow keys (lib/secrets.ts).
CREATE TABLE "creator_model_keys" (
	"user_id" uuid NOT NULL,
	"provider" text NOT NULL,
	"key_encrypted" text NOT NULL,
	"last4" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "creator_model_keys_pkey" PRIMARY KEY("user_id","provider"),
	CONSTRAINT "creator_model_keys_provider_check" CHECK ("creator_model_keys"."provider" in ('openai', 'anthropic', 'google', 'mistral'))
);--> statement-breakpoint
ALTER TABLE "creator_model_keys" ADD CONSTRAINT "creator_model_keys_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;
