import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

/** A message as the outbox lists it (lib/mailer.ts). */
export interface OutboxEntry {
  to: string;
  subject: string;
  text: string;
  links: { label: string; url: string }[];
  created_at: string;
}

async function poll<T>(what: string, find: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The development outbox's messages (no SMTP_URL outside production), newest first. */
export async function readOutbox(baseUrl: string): Promise<OutboxEntry[]> {
  const response = await fetch(`${baseUrl}/oidc/dev/outbox.json`);
  if (!response.ok) throw new Error(`outbox answered ${response.status}`);
  return ((await response.json()) as { messages: OutboxEntry[] }).messages;
}

/** The newest outbox message to `email` whose subject matches, waiting for it to arrive. */
export async function waitForOutboxMessage(
  baseUrl: string,
  email: string,
  subject: RegExp,
): Promise<OutboxEntry> {
  return poll(`a message to ${email}`, async () =>
    (await readOutbox(baseUrl)).find((m) => m.to === email.toLowerCase() && subject.test(m.subject)),
  );
}

/**
 * Confirms a verification link as its owner does: opens it (a form, nothing verified yet), then
 * sends the account's password with it. Answers the POST's response.
 */
export async function confirmVerificationLink(link: string, password: string): Promise<Response> {
  const page = await fetch(link);
  if (page.status !== 200) return page;
  const token = new URL(link).searchParams.get("token") ?? "";
  return fetch(new URL("/oidc/verify-email", link), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token, password }).toString(),
  });
}

/** The password oidc-client.ts's signUp gives a person who names none. */
export const DEFAULT_TEST_PASSWORD = "correct-horse-7";

/** Verifies the address mailed to `email` (through the outbox), as its owner would. */
export async function verifyEmailThroughOutbox(
  baseUrl: string,
  email: string,
  password = DEFAULT_TEST_PASSWORD,
): Promise<void> {
  const message = await waitForOutboxMessage(baseUrl, email, /Verify your email/);
  const link = message.links[0]?.url;
  if (!link) throw new Error("the verification message has no link");
  const response = await confirmVerificationLink(link, password);
  if (response.status !== 200) throw new Error(`verification link answered ${response.status}`);
}

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  /** The text part, decoded (quoted-printable soft breaks and escapes undone). */
  text: string;
}

/** A real SMTP server on loopback (the `smtp-server` package), keeping what it receives. */
export async function startSmtpServer(): Promise<{
  url: string;
  messages: ReceivedMail[];
  waitFor(to: string, match: RegExp): Promise<ReceivedMail>;
  stop(): Promise<void>;
}> {
  const messages: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    onAuth(auth, _session, callback) {
      if (auth.username === "mailer" && auth.password === "s3cret") return callback(null, { user: "mailer" });
      callback(new Error("Invalid username or password"));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          text: decodeQuotedPrintable(raw),
        });
        callback();
      });
    },
    logger: false,
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://mailer:s3cret@127.0.0.1:${port}`,
    messages,
    waitFor: (to, match) =>
      poll(`mail to ${to}`, async () => messages.findLast((m) => m.to.includes(to) && match.test(m.text))),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function decodeQuotedPrintable(raw: string): string {
  return raw
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** The first link in a mail's text that starts with `prefix`. */
export function linkIn(mail: { text: string }, prefix: string): string {
  const escaped = prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const match = new RegExp(`${escaped}[^\\s"<>]+`).exec(mail.text);
  if (!match) throw new Error(`no link starting ${prefix} in the mail`);
  return match[0];
}
