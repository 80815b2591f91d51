-- The sandbox's payouts clock, per creator (docs/decisions/046): one shared clock let any signed-in
-- user move every creator's "now" (skipping everyone's hold period) without bound, up to dates
-- JavaScript and PostgreSQL cannot hold. Each creator's offset is now their own, forward only and at
-- most 90 days; the shared clock's offset is dropped (it is not anyone's).
CREATE TABLE "sandbox_clocks" (
	"user_id" uuid PRIMARY KEY NOT NULL,
	"offset_ms" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sandbox_clocks_bounded" CHECK ("sandbox_clocks"."offset_ms" >= 0 AND "sandbox_clocks"."offset_ms" <= 7776000000)
);--> statement-breakpoint
ALTER TABLE "sandbox_clocks" ADD CONSTRAINT "sandbox_clocks_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
DROP TABLE "sandbox_clock";
