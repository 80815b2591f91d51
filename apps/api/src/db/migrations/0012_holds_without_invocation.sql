ALTER TABLE "holds" DROP CONSTRAINT "holds_invocation_id_invocations_id_fk";
--> statement-breakpoint
ALTER TABLE "holds" DROP COLUMN "invocation_id";