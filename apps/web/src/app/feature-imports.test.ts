import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  checkFeatureImports,
  featureImportProblems,
  importsOf,
} from "../../../../scripts/check-feature-imports.mjs";

// The rule `npm run lint` enforces (docs/decisions/079): a feature imports lib/, components/, the
// test helpers and its own files; only the app shell composes features.
const src = path.resolve(__dirname, "..");
const at = (file: string) => path.join(src, file);

describe("feature imports", () => {
  it("finds static, re-exported and lazy imports", () => {
    expect(
      importsOf(
        'import { a } from "./a";\nimport type { B } from "../b";\nexport { c } from "./c";\nconst d = () => import("../d");\nimport "./side";',
      ),
    ).toEqual(["./a", "../b", "./c", "../d", "./side"]);
  });

  it("refuses a feature importing another feature", () => {
    const problems = featureImportProblems(
      src,
      at("features/prompts/prompt-editor-page.tsx"),
      'import { PromoteDialog } from "../releases/promote-dialog";',
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain("features/releases/promote-dialog");
    expect(problems[0]).toContain('feature "prompts"');
  });

  it("refuses a feature's page importing the app shell, and allows it in a test", () => {
    const text = 'import { createQueryClient } from "../../app/query-client";';
    expect(featureImportProblems(src, at("features/wallet/wallet-page.tsx"), text)).toHaveLength(1);
    expect(featureImportProblems(src, at("features/wallet/wallet-page.test.tsx"), text)).toEqual([]);
  });

  it("allows lib, components, test helpers, the feature's own files and packages", () => {
    const text = [
      'import { formatMoney } from "../../lib/format";',
      'import { Button } from "../../components/ui/button";',
      'import { stubFetch } from "../../test/fetch-stub";',
      'import { useLabels } from "./api/labels";',
      'import { VersionDiff } from "../releases/version-diff";',
      'import { z } from "zod";',
    ].join("\n");
    expect(featureImportProblems(src, at("features/releases/versions-page.tsx"), text)).toEqual([]);
  });

  it("the app shell may import any feature", () => {
    expect(
      featureImportProblems(src, at("app/router.tsx"), 'import { X } from "../features/prompts/x";'),
    ).toEqual([]);
  });

  it("holds for the web app today", () => {
    expect(checkFeatureImports(src)).toEqual([]);
  });
});
