import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  type AppPackageField,
  type AppPackageManifest,
  type AppPackageType,
  IoSchemaSchema,
} from "@promptmint/contracts";
import { strFromU8, strToU8, zipSync } from "fflate";
import type { Database } from "../../db/client.ts";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { loadPrompt } from "../prompts/load-prompt.ts";

const templatesDir = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../../../../packages/app-templates",
);

/** SPEC §7: chat for prompt apps in chat mode, completion for everything else. */
export function defaultPackageType(app: Pick<ApplicationRow, "type" | "interactionMode">): AppPackageType {
  return app.type === "prompt" && app.interactionMode === "chat" ? "chat" : "completion";
}

/** SPEC §7: `{slug}-{type}-app.zip`. */
export function packageFileName(slug: string, type: AppPackageType): string {
  return `${slug}-${type}-app.zip`;
}

/**
 * The page's form: a prompt app's input schema (in chat, `query` is the message box, not a
 * field); a workflow app takes free text, which its provider interprets.
 */
export async function describeInputs(
  db: Database,
  app: ApplicationRow,
  type: AppPackageType,
): Promise<AppPackageField[]> {
  if (app.type === "workflow") {
    return type === "chat" ? [] : [{ variable: "query", label: "Query", type: "string", required: true }];
  }
  const { active } = await loadPrompt(db, app);
  const schema = IoSchemaSchema.parse(active.inputSchema);
  return Object.entries(schema.properties)
    .filter(([variable]) => !(type === "chat" && variable === "query"))
    .map(([variable, property]) => ({
      variable,
      label: property.description || variable,
      type: property.type,
      required: schema.required.includes(variable),
      ...(property.default !== undefined ? { default: property.default } : {}),
      ...(property.enum?.length ? { options: property.enum } : {}),
      ...(property.maxLength !== undefined ? { max_length: property.maxLength } : {}),
    }));
}

/** Template files by path inside the app: the shared ones, then the type's own (which win). */
const templateCache = new Map<AppPackageType, Map<string, Uint8Array>>();
function templateFiles(type: AppPackageType): Map<string, Uint8Array> {
  let files = templateCache.get(type);
  if (!files) {
    files = new Map();
    for (const folder of ["shared", type]) {
      const root = path.join(templatesDir, folder);
      for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
        if (!entry.isFile()) continue;
        const file = path.join(entry.parentPath, entry.name);
        files.set(path.relative(root, file).split(path.sep).join("/"), readFileSync(file));
      }
    }
    templateCache.set(type, files);
  }
  return files;
}

/**
 * The downloadable front-end app as a zip: the template with the app's name, description and
 * inputs written in (app.json, README.md) and `.env.example` pointing at this platform.
 */
export async function buildAppPackage(
  db: Database,
  options: { app: ApplicationRow; type: AppPackageType; publicUrl: string },
): Promise<{ fileName: string; zip: Uint8Array }> {
  const { app, type, publicUrl } = options;
  const fileName = packageFileName(app.slug, type);
  const manifest: AppPackageManifest = {
    name: app.name,
    description: app.description,
    slug: app.slug,
    type,
    app_type: app.type,
    inputs: await describeInputs(db, app, type),
  };
  const placeholders: Record<string, string> = {
    name: app.name,
    description: app.description,
    slug: app.slug,
    type,
    base_url: publicUrl,
    endpoint: `${type}-messages`,
  };

  const files: Record<string, Uint8Array> = {};
  for (const [name, content] of templateFiles(type)) {
    files[name] =
      name === "README.md"
        ? strToU8(
            strFromU8(content).replace(/\{\{(\w+)\}\}/g, (match, key: string) => placeholders[key] ?? match),
          )
        : content;
  }
  files["app.json"] = strToU8(`${JSON.stringify(manifest, null, 2)}\n`);
  files[".env.example"] = strToU8(
    [
      "# Copy this file to .env and put your API key after PROMPTMINT_API_KEY=",
      `PROMPTMINT_BASE_URL=${publicUrl}`,
      `PROMPTMINT_APP_SLUG=${app.slug}`,
      "PROMPTMINT_API_KEY=",
      "PORT=8080",
      "# 127.0.0.1 serves this machine only; 0.0.0.0 lets anyone who reaches it spend your key (README.md)",
      "HOST=127.0.0.1",
      "",
    ].join("\n"),
  );
  files[".gitignore"] = strToU8(".env\nnode_modules/\n");
  files["package.json"] = strToU8(
    `${JSON.stringify(
      {
        name: `${app.slug}-${type}-app`,
        private: true,
        type: "module",
        scripts: { start: "node server.mjs" },
      },
      null,
      2,
    )}\n`,
  );

  const folder = fileName.replace(/\.zip$/, "");
  const entries = Object.fromEntries(
    Object.entries(files).map(([name, data]) => [`${folder}/${name}`, data]),
  );
  return { fileName, zip: zipSync(entries, { level: 6 }) };
}
