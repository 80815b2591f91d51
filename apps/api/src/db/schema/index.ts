export * from "./analytics.ts";
export * from "./applications.ts";
export * from "./auth.ts";
export * from "./billing.ts";
export * from "./embed.ts";
export * from "./identity.ts";
export * from "./payouts.ts";
export * from "./workflows.ts";
