export * from "./auth.ts";
export * from "./config.ts";
export * from "./errors.ts";
