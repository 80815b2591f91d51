-- A consumer's rating of an answer (Dify's message feedback, docs/decisions/031): one per call,
-- replaced by a new rating and removed by a null one. The message is the call's invocation; no
-- foreign key to it (invocations are append-only money history, written on the hot path).
CREATE TABLE "message_feedbacks" (
	"message_id" uuid PRIMARY KEY NOT NULL,
	"application_id" uuid NOT NULL,
	"caller_user_id" uuid NOT NULL,
	"end_user" text DEFAULT '' NOT NULL,
	"rating" text NOT NULL,
	"content" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "message_feedbacks_rating" CHECK ("message_feedbacks"."rating" in ('like', 'dislike'))
);
--> statement-breakpoint
ALTER TABLE "message_feedbacks" ADD CONSTRAINT "message_feedbacks_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "message_feedbacks" ADD CONSTRAINT "message_feedbacks_caller_user_id_users_id_fk" FOREIGN KEY ("caller_user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "message_feedbacks_application_idx" ON "message_feedbacks" USING btree ("application_id","updated_at");
