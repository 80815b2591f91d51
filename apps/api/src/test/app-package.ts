import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { strFromU8, unzipSync } from "fflate";
import type { Caller } from "./caller.ts";

export interface DownloadedPackage {
  status: number;
  headers: Headers;
  /** Text of every file in the zip, by its path inside the zip. */
  files: Record<string, string>;
  body: any;
}

/** `GET /api/app/{slug}/download-frontend` as `caller`, unzipped when it is a zip. */
export async function downloadAppPackage(
  baseUrl: string,
  caller: Pick<Caller, "token"> | null,
  slug: string,
  query = "",
): Promise<DownloadedPackage> {
  const response = await fetch(`${baseUrl}/api/app/${slug}/download-frontend${query}`, {
    headers: caller ? { authorization: `Bearer ${caller.token}` } : {},
  });
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (response.headers.get("content-type") !== "application/zip") {
    return {
      status: response.status,
      headers: response.headers,
      files: {},
      body: JSON.parse(strFromU8(bytes)),
    };
  }
  const files = Object.fromEntries(
    Object.entries(unzipSync(bytes)).map(([name, data]) => [name, strFromU8(data)]),
  );
  return { status: response.status, headers: response.headers, files, body: undefined };
}

/** Writes unzipped files under `dir`; returns the app's own folder (the zip's single top folder). */
export function writeAppPackage(files: Record<string, string>, dir: string): string {
  for (const [name, text] of Object.entries(files)) {
    const file = path.join(dir, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  const [top] = Object.keys(files)[0]?.split("/") ?? [];
  return path.join(dir, top ?? "");
}
