export * from "./auth.ts";
export * from "./identity.ts";
