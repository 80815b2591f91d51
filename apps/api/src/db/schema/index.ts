export * from "./applications.ts";
export * from "./auth.ts";
export * from "./identity.ts";
