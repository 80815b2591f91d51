import pg from "pg";

/** Runs one statement on its own connection to `url` (creating or dropping a scratch database). */
export async function queryOnce(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** `adminUrl` with its database replaced by `name`, on the same server. */
export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
