-- Responses kept for their caller (docs/decisions/054): `store` (default true, as OpenAI's),
-- `previous_response_id`, retrieve, delete and input_items. Each row holds the whole conversation
-- it answered, so a chain never depends on an earlier row still existing. Swept at expires_at.
CREATE TABLE "stored_responses" (
	"id" text PRIMARY KEY NOT NULL,
	"caller_user_id" uuid NOT NULL,
	"application_id" uuid NOT NULL,
	"input_items" jsonb NOT NULL,
	"response" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "stored_responses" ADD CONSTRAINT "stored_responses_caller_user_id_users_id_fk" FOREIGN KEY ("caller_user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "stored_responses" ADD CONSTRAINT "stored_responses_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "stored_responses_caller_idx" ON "stored_responses" USING btree ("caller_user_id");--> statement-breakpoint
CREATE INDEX "stored_responses_expires_idx" ON "stored_responses" USING btree ("expires_at");
