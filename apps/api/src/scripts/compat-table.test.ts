import { describe, expect, it } from "vitest";
import {
  anyFailed,
  asIfBothDatabases,
  compatRows,
  renderCompatibilityTable,
  type VitestReport,
} from "./compat-table.ts";

const test = (client: string, title: string, status: string, nested: string[] = []) => ({
  ancestorTitles: [client, ...nested],
  title,
  status,
});

/** What vitest's JSON reporter writes for a run on PGlite and PostgreSQL (one file entry each). */
function report(): VitestReport {
  const openaiRun = (toolsStatus: string) => ({
    name: "/repo/apps/api/src/modules/gateway/openai.compat.test.ts",
    assertionResults: [
      test("openai", "chat.completions tools → refused 400 tools", toolsStatus),
      test("openai", "chat.completions.create | blocking → works", "passed"),
      test("openai", "models.retrieve → works", "skipped"),
    ],
  });
  return {
    testResults: [
      openaiRun("passed"),
      {
        name: "/repo/apps/api/src/modules/apps/dify.compat.test.ts",
        assertionResults: [
          test("dify-client", "renameConversation → works", "passed", ["ChatClient"]),
          test("dify-client", "a title without an arrow", "passed"),
        ],
      },
      {
        name: "/repo/apps/api/src/modules/gateway/openai.test.ts",
        assertionResults: [test("x", "y → works", "passed")],
      },
      openaiRun("failed"),
      {
        name: "/repo/apps/api/src/modules/mcp/mcp.compat.test.ts",
        assertionResults: [test("@modelcontextprotocol/sdk", "tools/list → works", "passed")],
      },
      {
        name: "/repo/apps/api/src/modules/mcp/mcp.compat.test.ts",
        assertionResults: [test("@modelcontextprotocol/sdk", "tools/list → works", "passed")],
      },
    ],
  };
}

describe("the compatibility table", () => {
  it("merges each compat test's runs: passed twice ✓, once PGlite only, any failure ✗, skipped not run", () => {
    const rows = compatRows(report());
    expect(rows).toEqual([
      { client: "@modelcontextprotocol/sdk", feature: "tools/list", outcome: "works", status: "passed" },
      {
        client: "dify-client",
        feature: "ChatClient renameConversation",
        outcome: "works",
        status: "passed-pglite-only",
      },
      {
        client: "dify-client",
        feature: "a title without an arrow",
        outcome: "",
        status: "passed-pglite-only",
      },
      { client: "openai", feature: "chat.completions tools", outcome: "refused 400 tools", status: "failed" },
      { client: "openai", feature: "chat.completions.create | blocking", outcome: "works", status: "passed" },
      { client: "openai", feature: "models.retrieve", outcome: "works", status: "not-run" },
    ]);
    expect(anyFailed(rows)).toBe(true);
    expect(anyFailed(rows.filter((row) => row.status !== "failed"))).toBe(false);
  });

  it("renders versions, a summary per client and one table per client, the same for the same report", () => {
    const versions = { openai: "7.1.0", "dify-client": "2.3.2" };
    const markdown = renderCompatibilityTable(compatRows(report()), versions);
    expect(markdown).toBe(renderCompatibilityTable(compatRows(report()), versions));
    expect(markdown).toContain(
      "- @modelcontextprotocol/sdk (not installed)\n- dify-client 2.3.2\n- openai 7.1.0\n",
    );
    expect(markdown).toContain(
      [
        "| Client | works | refused | failed |",
        "| --- | --- | --- | --- |",
        "| @modelcontextprotocol/sdk | 1 | 0 | 0 |",
        "| dify-client | 1 | 0 | 0 |",
        "| openai | 1 | 0 | 1 |",
      ].join("\n"),
    );
    expect(markdown).toContain(
      [
        "## openai",
        "",
        "| Feature | Outcome | Status |",
        "| --- | --- | --- |",
        "| chat.completions tools | refused 400 tools | ✗ failed |",
        "| chat.completions.create \\| blocking | works | ✓ |",
        "| models.retrieve | works | – not run |",
      ].join("\n"),
    );
    expect(markdown).not.toMatch(/\d{4}-\d{2}-\d{2}/);
  });

  it("compares a run without PostgreSQL by what it could show: PGlite passes stand for both, failures stay", () => {
    const pgliteOnly: VitestReport = {
      testResults: [
        {
          name: "/repo/apps/api/src/modules/gateway/openai.compat.test.ts",
          assertionResults: [
            test("openai", "chat.completions.create | blocking → works", "passed"),
            test("openai", "chat.completions tools → refused 400 tools", "failed"),
          ],
        },
      ],
    };
    const bothRun: VitestReport = { testResults: [...pgliteOnly.testResults, ...pgliteOnly.testResults] };
    const versions = { openai: "7.1.0" };
    const alone = compatRows(pgliteOnly);
    expect(alone.map((row) => row.status)).toEqual(["failed", "passed-pglite-only"]);
    expect(asIfBothDatabases(alone).map((row) => row.status)).toEqual(["failed", "passed"]);
    expect(renderCompatibilityTable(asIfBothDatabases(alone), versions)).toBe(
      renderCompatibilityTable(compatRows(bothRun), versions),
    );
    // A feature the committed table lacks still makes the two differ.
    const extra = compatRows({
      testResults: [
        {
          ...pgliteOnly.testResults[0],
          assertionResults: [test("openai", "models.list → works", "passed")],
        } as VitestReport["testResults"][number],
      ],
    });
    expect(renderCompatibilityTable(asIfBothDatabases([...alone, ...extra]), versions)).not.toBe(
      renderCompatibilityTable(compatRows(bothRun), versions),
    );
  });
});
