import { Readable } from "node:stream";
import {
  ApiErrorSchema,
  ReceiptListSchema,
  ReceiptParamsSchema,
  UsageExportQuerySchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import { type ReceiptIssuer, receiptHtml, receiptPdf } from "./receipt-documents.ts";
import { getReceipt, listReceipts } from "./receipts.ts";
import { usageCsv, usageExportFilter } from "./usage-export.ts";

const errors = { 400: ApiErrorSchema, 401: ApiErrorSchema, 404: ApiErrorSchema };
const security = [{ bearerAuth: [] }];
const tags = ["billing"];
const binary = { type: "string", format: "binary" } as const;

/** Receipts and the spend export (docs/decisions/069): each user's own only; anyone else's is a 404. */
export const receiptsRoutes: FastifyPluginAsyncZod<{
  db: Database;
  guards: AuthGuards;
  issuer: ReceiptIssuer;
}> = async (app, { db, guards, issuer }) => {
  app.get(
    "/receipts/",
    {
      schema: {
        tags,
        summary: "Your receipts: every wallet top-up, plan payment and paid payout, newest first",
        description:
          "Each is numbered once (`PM-000123`), the first time it is listed. `status` says what happened since: a refund, a dispute, a returned payout.",
        security,
        response: { 200: ReceiptListSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => ({ receipts: await listReceipts(db, currentUser(request).id) }),
  );

  app.get(
    "/receipts/:number/html",
    {
      schema: {
        tags,
        summary: "A receipt as a printable HTML page",
        security,
        params: ReceiptParamsSchema,
        response: { 200: z.string().meta({ ...binary, description: "text/html" }), ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request, reply) => {
      const receipt = await getReceipt(db, currentUser(request).id, request.params.number);
      return reply
        .header("content-type", "text/html; charset=utf-8")
        .header("cache-control", "private, no-store")
        .header("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'")
        .send(receiptHtml(receipt, issuer));
    },
  );

  app.get(
    "/receipts/:number/pdf",
    {
      schema: {
        tags,
        summary: "A receipt as a PDF, saved as `receipt-PM-000123.pdf`",
        security,
        params: ReceiptParamsSchema,
        response: {
          200: z.instanceof(Buffer).meta({ ...binary, description: "application/pdf" }),
          ...errors,
        },
      },
      onRequest: guards.requireUser,
    },
    async (request, reply) => {
      const receipt = await getReceipt(db, currentUser(request).id, request.params.number);
      const pdf = await receiptPdf(receipt, issuer);
      return reply
        .header("content-type", "application/pdf")
        .header("content-disposition", `attachment; filename="receipt-${receipt.number}.pdf"`)
        .header("cache-control", "private, no-store")
        .send(Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength));
    },
  );

  app.get(
    "/usage/export.csv",
    {
      schema: {
        tags,
        summary: "Your charged calls as CSV: one row per call from `from` to `to` (UTC dates, both included)",
        description:
          "Calls paid from your wallet, oldest first, optionally only those made with one of your API keys (`key`, its id) or to one app (`app`, its slug). Cells that a spreadsheet would run as a formula are written as text.",
        security,
        querystring: UsageExportQuerySchema,
        response: { 200: z.instanceof(Readable).meta({ ...binary, description: "text/csv" }), ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request, reply) => {
      const filter = await usageExportFilter(db, currentUser(request).id, request.query);
      return reply
        .header("content-type", "text/csv; charset=utf-8")
        .header("content-disposition", `attachment; filename="${filter.fileName}"`)
        .header("cache-control", "private, no-store")
        .send(Readable.from(usageCsv(db, filter)));
    },
  );
};
