/**
 * The form in which an email address is stored and compared (users, ADMIN_EMAILS, operator
 * grants): trimmed, ASCII letters lower-cased, nothing else changed. Full Unicode lower-casing
 * would merge different mailboxes: U+212A KELVIN SIGN lower-cases to an ASCII "k", so an address an
 * external issuer verified as "\u212Aen@…" would compare equal to "ken@…" (docs/decisions/041).
 */
export function addressKey(email: string): string {
  return email.trim().replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}
