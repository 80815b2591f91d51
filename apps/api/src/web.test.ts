import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.ts";
import { runtimeConfigFor } from "./modules/system/system.routes.ts";
import { indexPage } from "./web.ts";

const html =
  '<!doctype html><html><head><title>Promptmint</title></head><body><div id="root"></div></body></html>';

function inlineJson(page: string): string {
  const match = page.match(/<script id="runtime-config" type="application\/json">(.*?)<\/script><\/head>/);
  if (!match?.[1]) throw new Error("no runtime-config script in the page");
  return match[1];
}

describe("the SPA's page", () => {
  it("carries the same runtime config as GET /api/config, as inert JSON in the head", () => {
    const config = loadConfig({ PUBLIC_URL: "https://mint.example.com" });
    const page = indexPage(html, config);

    expect(JSON.parse(inlineJson(page))).toEqual(runtimeConfigFor(config));
    expect(page).toContain('<div id="root"></div>');
  });

  it("escapes '<' so no configured value can close the script element", () => {
    const config = loadConfig({ PUBLIC_URL: "https://mint.example.com/</script><script>alert(1)//" });
    const json = inlineJson(indexPage(html, config));

    expect(runtimeConfigFor(config).public_url).toContain("</script>");
    expect(json).not.toContain("<");
    expect(JSON.parse(json)).toEqual(runtimeConfigFor(config));
  });

  it("writes a route's prerendered shell into #root, as it is", () => {
    const config = loadConfig({ PUBLIC_URL: "https://mint.example.com" });
    const shell = "<main><h1>Dashboard</h1><p>$& and $1 stay</p></main>";

    expect(indexPage(html, config, shell)).toContain(`<div id="root">${shell}</div>`);
    expect(indexPage(html, config)).toContain('<div id="root"></div>');
  });
});
