export * from "./applications.ts";
export * from "./auth.ts";
export * from "./config.ts";
export * from "./errors.ts";
export * from "./gateway.ts";
export * from "./keys.ts";
export * from "./prompts.ts";
export * from "./workflows.ts";
