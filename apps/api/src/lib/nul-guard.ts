import type { FastifyInstance } from "fastify";
import { invalidFields } from "./errors.ts";

/**
 * PostgreSQL's text and jsonb cannot hold U+0000, so a NUL anywhere in a path parameter, query
 * or JSON body would fail deep in a query as a 500. Refused up front instead, as a 400 naming
 * the field (DESIGN.md §4: never a 500 for bad input).
 */
export function installNulGuard(app: FastifyInstance): void {
  app.addHook("preValidation", async (request) => {
    const fields: Record<string, string> = {};
    collectNulFields(request.params, "", fields);
    collectNulFields(request.query, "", fields);
    if (!Buffer.isBuffer(request.body)) collectNulFields(request.body, "", fields);
    if (Object.keys(fields).length > 0) throw invalidFields(fields);
  });
}

function collectNulFields(value: unknown, path: string, fields: Record<string, string>, depth = 0): void {
  if (typeof value === "string") {
    if (value.includes("\u0000")) fields[path || "body"] = "must not contain NUL characters";
    return;
  }
  // Deeper than any contract goes; validation refuses such bodies anyway.
  if (!value || typeof value !== "object" || depth > 64) return;
  for (const [key, item] of Object.entries(value)) {
    const name = path ? `${path}.${key}` : key;
    if (key.includes("\u0000")) fields[name.replaceAll("\u0000", "\\0")] = "must not contain NUL characters";
    else collectNulFields(item, name, fields, depth + 1);
  }
}
