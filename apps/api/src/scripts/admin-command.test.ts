import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "../db/client.ts";
import { type Caller, callerAt, createCaller } from "../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../test/database.ts";
import { signIn, uniqueEmail } from "../test/oidc-client.ts";
import { startTestServer, TEST_SECRET_KEY, type TestServer } from "../test/server.ts";
import { runAdminCommand } from "./admin-command.ts";

const run = promisify(execFile);
const script = path.join(path.dirname(fileURLToPath(import.meta.url)), "admin.ts");
const BOOTSTRAPPED = uniqueEmail("bootstrap");
const actor = { id: null, email: "npm run admin (test)" };

let testDb: TestDatabase;
let server: TestServer;

beforeAll(async () => {
  testDb = await createTestDatabase();
  server = await startTestServer(testDb, { env: { ADMIN_EMAILS: BOOTSTRAPPED } });
});
afterAll(async () => {
  await server?.stop();
  await testDb?.destroy();
});

const audit = (email: string) =>
  queryRows<{ actor_email: string; action: string }>(
    server.database.db,
    sql`select actor_email, action from audit_log where details->>'email' = ${email} order by id`,
  );

describe("npm run admin -- grant | revoke | list", () => {
  it("refuses an unknown address and an unverified one, naming how to verify; grants a verified one, audited", async () => {
    const db = server.database.db;
    const unknown = await runAdminCommand(db, ["grant", "nobody@example.com"], actor);
    expect(unknown).toEqual({ exitCode: 1, lines: [expect.stringMatching(/has signed in yet/)] });

    const unverified = await createCaller(server.baseUrl, "Unverified");
    const refused = await runAdminCommand(db, ["grant", unverified.email], actor);
    expect(refused.exitCode).toBe(1);
    expect(refused.lines[0]).toMatch(/is not verified: they must open the verification link/);
    expect((await unverified.api("GET", "/api/admin/access")).status).toBe(403);

    const person = await createCaller(server.baseUrl, "Verified", { verified: true });
    expect((await person.api("GET", "/api/admin/access")).status).toBe(403);
    const granted = await runAdminCommand(db, ["grant", person.email.toUpperCase()], actor);
    expect(granted.exitCode).toBe(0);
    expect(granted.lines[0]).toMatch(/^Granted operator: /);
    expect((await person.api("GET", "/api/admin/access")).status).toBe(200);
    expect((await runAdminCommand(db, ["grant", person.email], actor)).lines[0]).toMatch(
      /already an operator/,
    );
    expect((await runAdminCommand(db, ["list"], actor)).lines.join("\n")).toContain(person.email);

    expect((await runAdminCommand(db, ["revoke", person.email], actor)).exitCode).toBe(0);
    expect((await person.api("GET", "/api/admin/access")).status).toBe(403);
    expect(await audit(person.email)).toEqual([
      { actor_email: actor.email, action: "operator.grant" },
      { actor_email: actor.email, action: "operator.revoke" },
    ]);
    expect(await audit(unverified.email)).toEqual([]);
    expect((await runAdminCommand(db, ["promote", person.email], actor)).exitCode).toBe(2);
  });

  it("keeps a revoked ADMIN_EMAILS operator revoked when they sign in again", async () => {
    const operator = await createCaller(server.baseUrl, "Bootstrapped", {
      email: BOOTSTRAPPED,
      verified: true,
    });
    expect((await operator.api("GET", "/api/admin/access")).status).toBe(200);
    expect((await runAdminCommand(server.database.db, ["revoke", BOOTSTRAPPED], actor)).exitCode).toBe(0);
    const tokens = await signIn(server.baseUrl, BOOTSTRAPPED, "correct-horse-7");
    const again = callerAt(server.baseUrl, { email: BOOTSTRAPPED, token: tokens.access_token });
    expect((await again.api("POST", "/api/auth/login/")).status).toBe(200);
    expect((await again.api("GET", "/api/admin/access")).status).toBe(403);
    expect(await audit(BOOTSTRAPPED)).toEqual([
      { actor_email: "ADMIN_EMAILS bootstrap", action: "operator.grant" },
      { actor_email: actor.email, action: "operator.revoke" },
    ]);
  });

  it("runs as a command against the server's database (a child process, as an operator runs it)", async () => {
    const person: Caller = await createCaller(server.baseUrl, "Child", { verified: true });
    // PGlite is one process at a time: the server steps aside while the command runs.
    const running = server;
    server = undefined as unknown as TestServer;
    await running.stop();
    const env = { ...process.env, NODE_ENV: "test", SECRET_KEY: TEST_SECRET_KEY, ...testDb.serverEnv };
    const granted = await run(process.execPath, [script, "grant", person.email], { env });
    expect(granted.stdout).toMatch(/^Granted operator: /);
    const refused = await run(process.execPath, [script, "grant", "nobody@example.com"], { env }).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining("has signed in yet") });

    server = await startTestServer(testDb);
    const after = callerAt(server.baseUrl, {
      email: person.email,
      token: (await signIn(server.baseUrl, person.email, "correct-horse-7")).access_token,
    });
    expect((await after.api("GET", "/api/admin/access")).status).toBe(200);
  }, 180_000);
});
