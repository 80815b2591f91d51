import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import nodemailer from "nodemailer";
import type { Config } from "../config.ts";

/** One message the platform mails: plain text and HTML, and the links it carries (for the outbox page). */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  links: { label: string; url: string }[];
}

/** A message kept in the development outbox ($DATA_DIR/outbox/<id>.json beside <id>.eml). */
export interface OutboxMessage extends MailMessage {
  id: string;
  from: string;
  created_at: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
  /** Where messages go instead of SMTP (development without SMTP_URL); undefined with SMTP. */
  readonly outboxDir: string | undefined;
  close(): void;
}

/**
 * Mail through SMTP_URL, or, with no SMTP outside production, into the outbox: each message as an
 * .eml file (open it in any mail client) and a .json file that /oidc/dev/outbox lists. Never
 * silently nowhere: production refuses to start without SMTP_URL (config.ts).
 */
export function createMailer(mail: Config["mail"]): Mailer {
  const outboxDir = mail.outboxDir;
  const transport = mail.smtpUrl
    ? nodemailer.createTransport({
        url: mail.smtpUrl,
        connectionTimeout: 10_000,
        greetingTimeout: 10_000,
        socketTimeout: 20_000,
      } as Parameters<typeof nodemailer.createTransport>[0])
    : nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" });
  return {
    outboxDir,
    async send(message) {
      const envelope = {
        from: mail.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        html: message.html,
      };
      const info = await transport.sendMail(envelope);
      if (!outboxDir) return;
      const id = `${new Date().toISOString().replace(/[:.]/g, "-")}-${randomBytes(4).toString("hex")}`;
      await mkdir(outboxDir, { recursive: true });
      await writeFile(path.join(outboxDir, `${id}.eml`), (info as { message: Buffer }).message);
      const kept: OutboxMessage = { ...message, id, from: mail.from, created_at: new Date().toISOString() };
      // Written whole, then renamed into place: the outbox is listed while mail is sent, and a
      // half-written file read at that moment made the listing answer 500.
      const file = path.join(outboxDir, `${id}.json`);
      await writeFile(`${file}.tmp`, `${JSON.stringify(kept, null, 2)}\n`);
      await rename(`${file}.tmp`, file);
    },
    close() {
      transport.close();
    },
  };
}

/** The outbox's messages, newest first. */
export async function readOutbox(outboxDir: string, limit = 100): Promise<OutboxMessage[]> {
  const names = await readdir(outboxDir).catch(() => [] as string[]);
  const newest = names
    .filter((name) => name.endsWith(".json"))
    .sort()
    .reverse()
    .slice(0, limit);
  const messages = await Promise.all(
    newest.map(async (name) =>
      JSON.parse(await readFile(path.join(outboxDir, name), "utf8").catch(() => "null")),
    ),
  );
  return messages.filter((message): message is OutboxMessage => Boolean(message?.id));
}
