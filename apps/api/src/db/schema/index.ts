export * from "./admin.ts";
export * from "./analytics.ts";
export * from "./applications.ts";
export * from "./auth.ts";
export * from "./billing.ts";
export * from "./embed.ts";
export * from "./identity.ts";
export * from "./workflows.ts";
