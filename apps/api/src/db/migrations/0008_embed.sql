CREATE TABLE "embed_origins" (
	"application_id" uuid NOT NULL,
	"origin" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "embed_origins_application_id_origin_pk" PRIMARY KEY("application_id","origin")
);
--> statement-breakpoint
ALTER TABLE "embed_origins" ADD CONSTRAINT "embed_origins_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;