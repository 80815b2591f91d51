import type { UsageExportQuery } from "@promptmint/contracts";
import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { csvRow } from "../../lib/csv.ts";
import { parseDateParam } from "../../lib/date-range.ts";
import { AppError, invalidFields } from "../../lib/errors.ts";

/**
 * A consumer's spend export (docs/decisions/069): one CSV row per call they were charged for from
 * their wallet (`hold_id` set, `charged_cents` > 0: the price each call spent, as its answer said)
 * between two UTC dates, both included, optionally for one of their API keys and one app. Read a
 * page at a time by (created_at, id), so a year of calls is never one array in memory. Calls a
 * plan covered cost nothing per call and are not rows; days dropped by INVOCATION_RETENTION_DAYS
 * are gone (decision 038).
 */

const DAY_MS = 86_400_000;
const PAGE_ROWS = 1000;

export const USAGE_CSV_COLUMNS = [
  "call_id",
  "time_utc",
  "app_slug",
  "app_name",
  "api_key_name",
  "api_key_prefix",
  "mode",
  "status",
  "model",
  "input_tokens",
  "output_tokens",
  "price_charged",
  "currency",
] as const;

export interface UsageExportFilter {
  userId: string;
  from: Date;
  /** Exclusive: the day after `to`. */
  until: Date;
  keyId: string | null;
  applicationId: string | null;
  fileName: string;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** Reads and checks the query: dates (400 naming the field), the key and the app (404 if not the caller's to name). */
export async function usageExportFilter(
  db: Database,
  userId: string,
  query: UsageExportQuery,
): Promise<UsageExportFilter> {
  for (const name of ["from", "to"] as const)
    if (!DATE_ONLY.test(query[name])) throw invalidFields({ [name]: "must be a date (YYYY-MM-DD)" });
  const from = parseDateParam("from", query.from);
  const to = parseDateParam("to", query.to);
  if (to < from) throw invalidFields({ to: "must be on or after from" });
  const until = new Date(to.getTime() + DAY_MS);
  let keyId: string | null = null;
  if (query.key) {
    const [key] = await queryRows<{ id: string }>(
      db,
      sql`select id from api_keys where id = ${query.key}::uuid and user_id = ${userId}::uuid`,
    );
    if (!key) throw new AppError("not_found", "API key not found");
    keyId = key.id;
  }
  let applicationId: string | null = null;
  if (query.app) {
    const [application] = await queryRows<{ id: string }>(
      db,
      sql`select id from applications
          where slug = ${query.app} and (visibility <> 'private' or owner_id = ${userId}::uuid)`,
    );
    if (!application) throw new AppError("not_found", "Application not found");
    applicationId = application.id;
  }
  return {
    userId,
    from,
    until,
    keyId,
    applicationId,
    fileName: `usage-${query.from}-to-${query.to}.csv`,
  };
}

interface UsageRow {
  id: string;
  at: string;
  created_at: string;
  slug: string | null;
  name: string | null;
  key_name: string | null;
  key_prefix: string | null;
  mode: string;
  status: string;
  model: string | null;
  input_tokens: number;
  output_tokens: number;
  charged_cents: string;
}

/** One page of charged calls after `after` (the last row's moment, to the microsecond, and id). */
async function usagePage(
  db: Database,
  filter: UsageExportFilter,
  after: { at: string; id: string } | null,
): Promise<UsageRow[]> {
  return queryRows<UsageRow>(
    db,
    sql`select i.id::text as id,
          to_char(i.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created_at,
          to_char(i.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at,
          a.slug, a.name, k.name as key_name, k.prefix as key_prefix, i.mode, i.status, i.model,
          i.input_tokens, i.output_tokens, i.charged_cents::text as charged_cents
        from invocations i
        left join applications a on a.id = i.application_id
        left join api_keys k on k.id = i.api_key_id
        where i.caller_user_id = ${filter.userId}::uuid and i.hold_id is not null and i.charged_cents > 0
          and i.created_at >= ${filter.from.toISOString()}::timestamptz
          and i.created_at < ${filter.until.toISOString()}::timestamptz
          and (${filter.keyId}::uuid is null or i.api_key_id = ${filter.keyId}::uuid)
          and (${filter.applicationId}::uuid is null or i.application_id = ${filter.applicationId}::uuid)
          and (${after?.at ?? null}::timestamptz is null
               or (i.created_at, i.id) > (${after?.at ?? null}::timestamptz, ${after?.id ?? null}::uuid))
        order by i.created_at, i.id
        limit ${PAGE_ROWS}`,
  );
}

const centsText = (cents: number) =>
  `${cents < 0 ? "-" : ""}${Math.floor(Math.abs(cents) / 100)}.${String(Math.abs(cents) % 100).padStart(2, "0")}`;

/** The CSV, a page of rows per chunk: the header, then each charged call oldest first. */
export async function* usageCsv(db: Database, filter: UsageExportFilter): AsyncGenerator<string> {
  yield csvRow([...USAGE_CSV_COLUMNS]);
  let after: { at: string; id: string } | null = null;
  for (;;) {
    const rows = await usagePage(db, filter, after);
    if (rows.length === 0) return;
    yield rows
      .map((row) =>
        csvRow([
          row.id,
          row.at,
          row.slug,
          row.name ?? "A deleted app",
          row.key_name,
          row.key_prefix,
          row.mode,
          row.status,
          row.model,
          row.input_tokens,
          row.output_tokens,
          centsText(Number(row.charged_cents)),
          "USD",
        ]),
      )
      .join("");
    const last = rows.at(-1) as UsageRow;
    after = { at: last.created_at, id: last.id };
    if (rows.length < PAGE_ROWS) return;
  }
}
