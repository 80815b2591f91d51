import { pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { applications } from "./applications.ts";

/** The sites (exact origins) allowed to show an embed app's widget and call it with an embed token. */
export const embedOrigins = pgTable(
  "embed_origins",
  {
    applicationId: uuid("application_id")
      .notNull()
      .references(() => applications.id, { onDelete: "cascade" }),
    origin: text("origin").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.applicationId, t.origin] })],
);
