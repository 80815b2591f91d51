import type { FastifyInstance } from "fastify";
import { invalidFields } from "./errors.ts";

/** How deeply a JSON body may nest: no contract goes past a handful of levels. */
export const MAX_JSON_DEPTH = 64;

/**
 * JSON bodies are checked for depth before they are parsed: one linear scan of the text, cheaper
 * than the parse it prevents. A body nested thousands of levels deep would otherwise be parsed
 * (100 ms for 1 MB) and then overflow the stack wherever it is walked or stringified (a 500).
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    if (jsonDepth(body as string) > MAX_JSON_DEPTH) {
      done(invalidFields({ body: `is nested more than ${MAX_JSON_DEPTH} levels deep` }), undefined);
      return;
    }
    parse(request, body as string, done);
  });
}

/** The deepest nesting of arrays and objects in a JSON text (brackets inside strings do not count). */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i += 1;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      depth += 1;
      if (depth > deepest) deepest = depth;
    } else if (c === 93 /* ] */ || c === 125 /* } */) depth -= 1;
  }
  return deepest;
}
