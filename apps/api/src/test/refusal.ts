import { AppError } from "../lib/errors.ts";

/** The AppError `attempt` rejects with (a 429, in the limiter tests); anything else fails the test. */
export async function refusal(attempt: Promise<unknown>): Promise<AppError> {
  try {
    await attempt;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected a 429");
}
