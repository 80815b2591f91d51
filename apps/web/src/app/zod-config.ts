import { z } from "zod";

// The server's CSP forbids eval. Without this, zod probes `new Function` once and every page
// reports a (caught, harmless) CSP violation.
z.config({ jitless: true });
