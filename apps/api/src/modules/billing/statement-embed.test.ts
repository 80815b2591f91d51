import type { StatementLine } from "@promptmint/contracts";
import { expect, it } from "vitest";
import { createCaller, fundWallet, settledWallet } from "../../test/caller.ts";
import { embedWidget } from "../../test/embed-widget.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import { useVendorServer } from "../../test/use-test-server.ts";

/**
 * An owner's embedded widget: the owner pays each visitor's call from their wallet (not the app's
 * revenue, so the calls record no charge); the statement still shows them, one line per app and
 * day, and its lines add up to the balance (decision 029).
 */
const SHOP = "https://shop.example";

const { server } = useVendorServer({ GATEWAY_RATE_LIMIT_PER_MINUTE: "100" });

it("shows an owner's embedded widget's calls and their model cost as one line each per app and day, adding up to the balance", async () => {
  const owner = await createCaller(server.baseUrl, "Widget Owner");
  await fundWallet(owner, 1_000);
  const widget = embedWidget(server.baseUrl, SHOP);
  const { slug } = await widget.createEmbedApp(owner);
  const { token } = await widget.loadWidget(slug, `${SHOP}/`);
  for (const query of ["one", "two", "three"])
    expect((await widget.sendMessage(slug, token, { body: { query } })).status).toBe(200);

  const wallet = await settledWallet(owner);
  const lines: StatementLine[] = (await owner.api("GET", "/api/wallet/statement/")).body.lines;
  const embedded = lines.filter((line) => line.kind === "embedded_calls");
  expect(embedded).toHaveLength(1);
  expect(embedded[0]).toMatchObject({ calls: 3, amount_micros: -3 * 25 * 10_000 });
  expect(embedded[0]?.description).toMatch(/\(embedded\) — 3 calls$/);
  // Their model cost, from the same wallet (decision 062): one line for the app and day.
  const modelCosts = lines.filter((line) => line.kind === "model_costs");
  expect(modelCosts).toHaveLength(1);
  expect(modelCosts[0]?.calls).toBe(3);
  expect(modelCosts[0]?.description).toMatch(/— 3 calls: model cost$/);
  const modelCost = -(modelCosts[0]?.amount_micros ?? 0);
  expect(modelCost).toBeGreaterThan(0);
  expect(lines.reduce((sum, line) => sum + line.amount_micros, 0)).toBe(wallet.balance_micros);
  expect(wallet.balance_micros).toBe((1_000 - 75) * 10_000 - modelCost);
  await expectReconciled(server.database.db);
});
