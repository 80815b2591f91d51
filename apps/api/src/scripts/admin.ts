import path from "node:path";
import { loadConfig } from "../config.ts";
import { openDatabase } from "../db/client.ts";
import { createSecretBox } from "../lib/secrets.ts";
import { cliActor, runAdminCommand } from "./admin-command.ts";

/**
 * `npm run admin -- grant EMAIL | revoke EMAIL | list`: who holds the operator role
 * (docs/decisions/041). Runs against DATABASE_URL, or the PGlite data in DATA_DIR (stop the
 * server first: PGlite is one process at a time).
 */
const config = loadConfig();
const database = await openDatabase({
  databaseUrl: config.databaseUrl,
  pgliteDir: path.join(config.dataDir, "pgdata"),
});
try {
  const { exitCode, lines } = await runAdminCommand(
    database.db,
    process.argv.slice(2),
    cliActor(),
    createSecretBox(config.secretKey),
  );
  for (const line of lines) (exitCode === 0 ? console.log : console.error)(line);
  process.exitCode = exitCode;
} finally {
  await database.close();
}
