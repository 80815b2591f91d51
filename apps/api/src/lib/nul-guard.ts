import type { FastifyInstance } from "fastify";
import { invalidFields } from "./errors.ts";
import { MAX_JSON_DEPTH } from "./json-body.ts";

/**
 * PostgreSQL's text and jsonb cannot hold U+0000, so a NUL anywhere in a path parameter, query
 * or JSON body would fail deep in a query as a 500. Refused up front instead, as a 400 naming
 * the field (DESIGN.md §4: never a 500 for bad input). Path parameters and the query are checked
 * on request, before any route's own onRequest hook looks an app up by its slug; bodies once parsed.
 */
export function installNulGuard(app: FastifyInstance): void {
  app.addHook("onRequest", async (request) => {
    const fields: Record<string, string> = {};
    collectNulFields(request.params, "", fields);
    collectNulFields(request.query, "", fields);
    if (Object.keys(fields).length > 0) throw invalidFields(fields);
  });
  app.addHook("preValidation", async (request) => {
    const fields: Record<string, string> = {};
    if (!Buffer.isBuffer(request.body)) collectNulFields(request.body, "", fields);
    if (Object.keys(fields).length > 0) throw invalidFields(fields);
  });
}

function collectNulFields(value: unknown, path: string, fields: Record<string, string>, depth = 0): void {
  if (typeof value === "string") {
    if (value.includes("\u0000")) fields[path || "body"] = "must not contain NUL characters";
    return;
  }
  if (!value || typeof value !== "object") return;
  // JSON bodies cannot be this deep (lib/json-body.ts); anything else that is, is refused too.
  if (depth > MAX_JSON_DEPTH) {
    fields[path || "body"] = `is nested more than ${MAX_JSON_DEPTH} levels deep`;
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    const name = path ? `${path}.${key}` : key;
    if (key.includes("\u0000")) fields[name.replaceAll("\u0000", "\\0")] = "must not contain NUL characters";
    else collectNulFields(item, name, fields, depth + 1);
  }
}
