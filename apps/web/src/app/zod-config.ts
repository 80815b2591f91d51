import { config } from "zod/v4/core";

// The server's CSP forbids eval. Without this, zod probes `new Function` once and every page
// reports a (caught, harmless) CSP violation. Only zod's settings are imported here, not its
// schemas, so the public pages' first load stays small (docs/decisions/016).
config({ jitless: true });
