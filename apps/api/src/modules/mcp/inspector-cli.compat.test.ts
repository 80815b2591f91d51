import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { applications, invocations } from "../../db/schema/index.ts";
import { fundWallet } from "../../test/caller.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { PRICE_META_KEY } from "./app-tool.ts";

// The MCP Inspector's CLI (`@modelcontextprotocol/inspector --cli`), as a developer runs it against
// an app's MCP endpoint with an API key: it lists the app's tool and calls it, paid once.

const run = promisify(execFile);
const inspector = path.join(
  path.dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/inspector/package.json")),
  "clients/launcher/build/index.js",
);

const { server } = useVendorServer();
const creator = useCaller(server, "Inspected Seller");
const consumer = useCaller(server, "Inspector User");
let slug = "";
let key = "";

beforeAll(async () => {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: {
      name: "Inspected Haiku",
      description: "Haiku",
      interaction_mode: "completion",
      visibility: "public",
      price_cents: 12,
    },
  });
  slug = app.slug;
  await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
    body: {
      model: "gpt-4-turbo",
      prompt_template: "Write a haiku about {{topic}}",
      input_schema: {
        type: "object",
        properties: { topic: { type: "string" } },
        required: ["topic"],
        additionalProperties: false,
      },
    },
  });
  await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } });
  await fundWallet(consumer, 100);
  key = (await consumer.api("POST", "/api/keys/", { body: { name: "inspector" } })).body.key;
});

/** One CLI run: `--cli <url> --transport http --header "Authorization: Bearer …" …args`, its JSON answer. */
async function inspect(...args: string[]) {
  const { stdout } = await run(
    process.execPath,
    [
      inspector,
      "--cli",
      `${server.baseUrl}/api/app/${slug}/mcp`,
      "--transport",
      "http",
      "--header",
      `Authorization: Bearer ${key}`,
      ...args,
    ],
    {
      timeout: 60_000,
      // Its catalogue in a directory of its own, not the home directory; nothing from the network.
      env: {
        ...process.env,
        MCP_CATALOG_PATH: path.join(mkdtempSync(path.join(os.tmpdir(), "pm-inspector-")), "mcp.json"),
      },
    },
  );
  return JSON.parse(stdout);
}

describe("@modelcontextprotocol/inspector", () => {
  it("--cli --method tools/list: the tool, its input schema and price → works", async () => {
    const listed = await inspect("--method", "tools/list");
    expect(listed.tools).toHaveLength(1);
    expect(listed.tools[0]).toMatchObject({
      name: slug,
      inputSchema: { properties: { topic: { type: "string" } }, required: ["topic"] },
      _meta: { [PRICE_META_KEY]: { amount: "0.12", amount_cents: 12, per: "call" } },
    });
    expect(listed.tools[0].description).toContain("Costs $0.12 per call");
  });

  it("--cli --method tools/call: the answer, charged once → works", async () => {
    const called = await inspect("--method", "tools/call", "--tool-name", slug, "--tool-arg", "topic=rain");
    expect(called.isError).toBeFalsy();
    expect(called.content).toEqual([{ type: "text", text: "echo: Write a haiku about rain" }]);
    expect(called._meta["promptmint/charge"]).toMatchObject({ charged_cents: 12, paid_by: "wallet" });
    const [app] = await server.database.db.select().from(applications).where(eq(applications.slug, slug));
    const rows = await server.database.db
      .select({ status: invocations.status, chargedCents: invocations.chargedCents })
      .from(invocations)
      .where(eq(invocations.applicationId, app?.id ?? ""));
    expect(rows).toEqual([{ status: "success", chargedCents: 12 }]);
  });
});
