import { screen } from "@testing-library/react";

/** A form control found by its label, typed so a test can read `value` or `checked`. */
export function field(label: string) {
  return screen.getByLabelText(label) as HTMLInputElement & HTMLSelectElement;
}

/** The texts that describe a control (its error, its hint), joined with " | ". */
export function describedBy(element: HTMLElement): string {
  const ids = element.getAttribute("aria-describedby")?.split(" ") ?? [];
  return ids.map((id) => document.getElementById(id)?.textContent ?? "").join(" | ");
}
