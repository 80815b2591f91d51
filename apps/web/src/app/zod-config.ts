import { config } from "zod/v4/core";

// The server's CSP forbids eval. Without this, zod probes `new Function` once and every page
// reports a (caught, harmless) CSP violation. Only zod's settings object is imported here, so
// zod itself stays out of the public pages' first load (docs/decisions/016).
config({ jitless: true });
