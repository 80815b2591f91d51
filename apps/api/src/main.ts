import { buildServer } from "./app.ts";
import { ConfigError, loadConfig } from "./config.ts";

async function main() {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const { app, warmUp } = await buildServer({ config });
  // On SIGTERM the listener closes at once (new connections are refused, requests arriving on
  // kept-alive connections get a 503), calls in flight run to completion, then the database
  // closes. Past SHUTDOWN_TIMEOUT_SECONDS the process exits anyway; holds of calls cut short
  // are released by another node's sweeper once they expire.
  const shutdown = async (signal: string) => {
    app.log.info({ signal }, "shutting down");
    setTimeout(() => {
      app.log.error({ timeoutSeconds: config.shutdownTimeoutSeconds }, "calls still running; exiting anyway");
      process.exit(1);
    }, config.shutdownTimeoutSeconds * 1000).unref();
    await app.close();
    process.exit(0);
  };
  process.once("SIGINT", () => void shutdown("SIGINT"));
  process.once("SIGTERM", () => void shutdown("SIGTERM"));

  // A deep accept queue (Node's default is 511; the kernel caps it at net.core.somaxconn): a burst
  // of thousands of new connections waits to be accepted instead of being reset.
  // The first paid call answers as fast as the hundredth (issue 20): connections, statements and
  // the paid path's code are warmed before the server says it listens (warm-up.ts). Never fatal.
  await app.ready();
  await warmUp();
  await app.listen({ port: config.port, host: config.host, backlog: 8192 });
  const database = config.databaseUrl ? "PostgreSQL (DATABASE_URL)" : `PGlite in ${config.dataDir}`;
  // The mail server's host only (SMTP_URL carries its password), or where mail goes without one.
  const mail = !config.oidc.embedded
    ? "sent by your identity provider (OIDC_ISSUER)"
    : config.mail.smtpUrl
      ? `SMTP via ${new URL(config.mail.smtpUrl).host}`
      : `no SMTP_URL: outbox in ${config.mail.outboxDir}, open ${config.publicUrl}/oidc/dev/outbox`;
  console.log(`\n  Promptmint is running: open ${config.publicUrl}\n  Data: ${database}\n  Mail: ${mail}\n`);
}

await main();
