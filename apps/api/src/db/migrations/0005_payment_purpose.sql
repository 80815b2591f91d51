ALTER TABLE "payments" ADD COLUMN "purpose" text DEFAULT 'top_up' NOT NULL;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "package_id" uuid;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "consumed_at" timestamp with time zone;