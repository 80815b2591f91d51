-- A prompt app's creator lets callers pass tools through to its model (docs/decisions/053). Off by default.
ALTER TABLE "applications" ADD COLUMN "allow_tools" boolean DEFAULT false NOT NULL;
