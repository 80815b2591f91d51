CREATE TABLE "workflow_providers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"description" text NOT NULL,
	"config_schema" jsonb NOT NULL,
	"supports_streaming" boolean DEFAULT false NOT NULL,
	CONSTRAINT "workflow_providers_slug_unique" UNIQUE("slug")
);
--> statement-breakpoint
CREATE TABLE "workflow_versions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"workflow_id" uuid NOT NULL,
	"version" integer NOT NULL,
	"provider_slug" text,
	"provider_config" jsonb NOT NULL,
	"timeout_seconds" integer NOT NULL,
	"max_iterations" integer NOT NULL,
	"enable_logging" boolean NOT NULL,
	"changelog" text DEFAULT '' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workflows" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"application_id" uuid NOT NULL,
	"provider_slug" text,
	"provider_config" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"timeout_seconds" integer DEFAULT 300 NOT NULL,
	"max_iterations" integer DEFAULT 10 NOT NULL,
	"enable_logging" boolean DEFAULT true NOT NULL,
	"active_version" integer DEFAULT 1 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "workflows_application_id_unique" UNIQUE("application_id")
);
--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "provider_conversation_id" text;--> statement-breakpoint
ALTER TABLE "workflow_versions" ADD CONSTRAINT "workflow_versions_workflow_id_workflows_id_fk" FOREIGN KEY ("workflow_id") REFERENCES "public"."workflows"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflows" ADD CONSTRAINT "workflows_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "workflow_versions_workflow_version_key" ON "workflow_versions" USING btree ("workflow_id","version");