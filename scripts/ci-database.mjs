// Creates or drops the per-run CI database on the local PostgreSQL: `node scripts/ci-database.mjs create|drop NAME`.
import pg from "pg";

const [action, name] = process.argv.slice(2);
if (!/^[a-z0-9_]+$/.test(name ?? "") || !["create", "drop"].includes(action)) {
  console.error("usage: ci-database.mjs create|drop name");
  process.exit(2);
}
const client = new pg.Client({
  connectionString: process.env.CI_ADMIN_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
});
await client.connect();
await client.query(
  action === "create" ? `create database ${name}` : `drop database if exists ${name} with (force)`,
);
await client.end();
console.log(`${action}d database ${name}`);
