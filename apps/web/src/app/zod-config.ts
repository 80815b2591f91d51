// The server's CSP forbids eval. zod decides whether to compile object parsers with
// `new Function` as each schema is built, from the settings object it keeps at
// `globalThis.__zod_globalConfig` (and adopts, if one is there, when it loads). A schema built before
// the setting is made probes `new Function` once, and the page reports a (caught, harmless) CSP
// violation. So the setting is made here without importing zod, and boot.ts, the page's only
// script, imports this module before any chunk that holds zod and the contracts' schemas: the
// bundler may evaluate such a chunk before the app's own code (seen when zod moved into a shared
// chunk). Nothing of zod is imported, so the public pages' first load stays small (decision 016).
const holder = globalThis as { __zod_globalConfig?: Record<string, unknown> };
holder.__zod_globalConfig = Object.assign(holder.__zod_globalConfig ?? {}, { jitless: true });
