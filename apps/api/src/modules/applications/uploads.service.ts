import { randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import type { UploadedFile } from "@promptmint/contracts";
import { eq, sql } from "drizzle-orm";
import type { FastifyRequest } from "fastify";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, uploadedFiles } from "../../db/schema/index.ts";
import { formatBytes } from "../../lib/body-limits.ts";
import { AppError } from "../../lib/errors.ts";
import type { LocalUser } from "../auth/auth.service.ts";

/** Types a workflow or prompt may take as a file (Dify's document and image kinds). */
const ALLOWED: Record<string, string[]> = {
  ".png": ["image/png"],
  ".jpg": ["image/jpeg"],
  ".jpeg": ["image/jpeg"],
  ".gif": ["image/gif"],
  ".webp": ["image/webp"],
  ".pdf": ["application/pdf"],
  ".txt": ["text/plain"],
  ".md": ["text/markdown", "text/plain"],
  ".csv": ["text/csv", "text/plain"],
  ".json": ["application/json"],
};

/** Magic numbers of the binary types, so a renamed executable is not accepted as an image. */
const SIGNATURES: Record<string, (head: Buffer) => boolean> = {
  ".png": (h) => h.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  ".jpg": (h) => h[0] === 0xff && h[1] === 0xd8,
  ".jpeg": (h) => h[0] === 0xff && h[1] === 0xd8,
  ".gif": (h) => h.subarray(0, 4).toString("latin1") === "GIF8",
  ".webp": (h) =>
    h.subarray(0, 4).toString("latin1") === "RIFF" && h.subarray(8, 12).toString("latin1") === "WEBP",
  ".pdf": (h) => h.subarray(0, 5).toString("latin1") === "%PDF-",
};

export async function saveUpload(
  db: Database,
  options: {
    request: FastifyRequest;
    application: ApplicationRow;
    uploader: LocalUser;
    dataDir: string;
    maxBytes: number;
    /** Total bytes one user's uploads may take on disk, all apps together. */
    quotaBytes: number;
  },
): Promise<UploadedFile> {
  const { request } = options;
  if (!request.isMultipart())
    throw new AppError("unsupported_media_type", "Send the file as multipart/form-data in the field 'file'");
  const left = options.quotaBytes - (await bytesUploadedBy(db, options.uploader.id));
  if (left <= 0) throw overQuota(options.quotaBytes);
  // A file past what the quota has left is cut off while it streams, like one past the size limit.
  const limit = Math.min(options.maxBytes, left);
  const part = await request
    .file({ limits: { fileSize: limit, files: 1 } })
    .catch((error: unknown) => Promise.reject(asClientError(error)));
  if (!part)
    throw new AppError("bad_request", "No file received: send it in the multipart field 'file'", {
      fields: { file: "is required" },
    });
  if (part.fieldname !== "file") {
    part.file.resume();
    throw new AppError(
      "bad_request",
      `Unexpected field '${part.fieldname}': send the file in the field 'file'`,
      { fields: { file: "is required" } },
    );
  }
  // PostgreSQL cannot store a NUL, and control characters have no place in a file name.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: that is what it looks for
  if (/[\u0000-\u001f\u007f]/.test(part.filename ?? "")) {
    part.file.resume();
    throw new AppError("bad_request", "The file's name must not contain control characters such as NUL", {
      fields: { file: "has a name with control characters" },
    });
  }
  const name = path.basename(part.filename || "upload").slice(0, 200);
  const extension = path.extname(name).toLowerCase();
  const allowedTypes = ALLOWED[extension];
  if (!allowedTypes) {
    part.file.resume();
    throw new AppError(
      "unsupported_media_type",
      `Files of type '${extension || "none"}' are not accepted; allowed: ${Object.keys(ALLOWED).join(" ")}`,
      {
        fields: { file: "has a type that is not accepted" },
      },
    );
  }
  const id = randomUUID();
  const dir = uploadsDir(options.dataDir, options.application.id);
  await mkdir(dir, { recursive: true });
  const storagePath = path.join(dir, `${id}${extension}`);

  let size = 0;
  let head = Buffer.alloc(0);
  part.file.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (head.length < 16) head = Buffer.concat([head, chunk]).subarray(0, 16);
  });
  try {
    await pipeline(part.file, createWriteStream(storagePath));
    if (part.file.truncated) {
      if (limit < options.maxBytes) throw overQuota(options.quotaBytes);
      throw new AppError(
        "payload_too_large",
        `File is larger than the ${Math.floor(options.maxBytes / 1024 / 1024)} MiB limit`,
        {
          fields: { file: "is too large" },
        },
      );
    }
    if (size === 0) throw new AppError("bad_request", "The file is empty", { fields: { file: "is empty" } });
    const signature = SIGNATURES[extension];
    if (signature && !signature(head)) {
      throw new AppError("unsupported_media_type", `The file's content is not a ${extension} file`, {
        fields: { file: "content does not match its type" },
      });
    }
  } catch (error) {
    await rm(storagePath, { force: true });
    throw asClientError(error);
  }

  const mimeType = allowedTypes.includes(part.mimetype)
    ? part.mimetype
    : (allowedTypes[0] ?? "application/octet-stream");
  const row = await db
    .transaction(async (tx) => {
      // One user's uploads are recorded one at a time, so parallel uploads cannot pass the quota together.
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`uploads:${options.uploader.id}`}))`);
      const used = await bytesUploadedBy(tx as unknown as Database, options.uploader.id);
      if (used + size > options.quotaBytes) throw overQuota(options.quotaBytes);
      const [inserted] = await tx
        .insert(uploadedFiles)
        .values({
          id,
          applicationId: options.application.id,
          uploaderId: options.uploader.id,
          name,
          size,
          mimeType,
          extension: extension.slice(1),
          storagePath,
        })
        .returning();
      if (!inserted) throw new Error("upload insert returned nothing");
      return inserted;
    })
    .catch(async (error: unknown) => {
      // A file with no row is never found again: it goes.
      await rm(storagePath, { force: true });
      throw error;
    });
  return {
    id: row.id,
    name: row.name,
    size: row.size,
    mime_type: row.mimeType,
    extension: row.extension,
    created_at: row.createdAt.toISOString(),
  };
}

/** Where an app's uploads are kept; deleting the app deletes the folder. */
function uploadsDir(dataDir: string, applicationId: string): string {
  return path.join(dataDir, "uploads", applicationId);
}

/** Removes an app's uploaded files from disk (its rows go with the app). */
export async function removeUploads(dataDir: string, applicationId: string): Promise<void> {
  await rm(uploadsDir(dataDir, applicationId), { recursive: true, force: true });
}

async function bytesUploadedBy(db: Database, uploaderId: string): Promise<number> {
  const [row] = await db
    .select({ total: sql<string>`coalesce(sum(${uploadedFiles.size}), 0)` })
    .from(uploadedFiles)
    .where(eq(uploadedFiles.uploaderId, uploaderId));
  return Number(row?.total ?? 0);
}

function overQuota(quotaBytes: number): AppError {
  return new AppError(
    "payload_too_large",
    `Upload quota exceeded: your files may take at most ${formatBytes(quotaBytes)} in total`,
    { fields: { file: "exceeds your upload quota" } },
  );
}

/**
 * A broken multipart body (no closing boundary, a malformed part header) makes the parser throw
 * a plain error with no status: that is the client's fault, a 400, not a 500. Errors from the
 * file system (they name a syscall) and errors that carry their own status stay as they are.
 */
function asClientError(error: unknown): unknown {
  if (error instanceof AppError || !(error instanceof Error)) return error;
  if ("syscall" in error || "statusCode" in error) return error;
  return new AppError("bad_request", "The multipart body is malformed", {
    fields: { file: "could not be read" },
  });
}
