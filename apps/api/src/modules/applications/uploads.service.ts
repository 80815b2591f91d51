import { randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import type { UploadedFile } from "@promptmint/contracts";
import type { FastifyRequest } from "fastify";
import type { Database } from "../../db/client.ts";
import { uploadedFiles } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import type { ApplicationRow } from "./applications.service.ts";

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
  },
): Promise<UploadedFile> {
  const { request } = options;
  if (!request.isMultipart())
    throw new AppError("unsupported_media_type", "Send the file as multipart/form-data in the field 'file'");
  const part = await request
    .file({ limits: { fileSize: options.maxBytes, files: 1 } })
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
  const dir = path.join(options.dataDir, "uploads", options.application.id);
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
  const [row] = await db
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
  if (!row) throw new Error("upload insert returned nothing");
  return {
    id: row.id,
    name: row.name,
    size: row.size,
    mime_type: row.mimeType,
    extension: row.extension,
    created_at: row.createdAt.toISOString(),
  };
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
