ALTER TABLE "prompt_versions" ALTER COLUMN "input_schema" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "prompt_versions" ALTER COLUMN "output_schema" SET DATA TYPE json;