import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";

/**
 * Provider secrets at rest: AES-256-GCM with a key derived (HKDF-SHA256) from SECRET_KEY.
 * Stored as `v1.<iv>.<tag>.<ciphertext>` in base64url.
 */
export interface SecretBox {
  encrypt(plaintext: string): string;
  decrypt(sealed: string): string;
  /**
   * A stable, opaque stand-in for values that must not leave the server as they are (internal ids
   * sent to a provider): HMAC-SHA256 of the parts under a key derived from SECRET_KEY, 22 base64url
   * characters (128 bits).
   */
  pseudonym(...parts: string[]): string;
}

export function createSecretBox(secretKey: string): SecretBox {
  const key = Buffer.from(hkdfSync("sha256", secretKey, "promptmint", "provider-secrets-v1", 32));
  const pseudonymKey = Buffer.from(hkdfSync("sha256", secretKey, "promptmint", "pseudonyms-v1", 32));
  return {
    pseudonym(...parts) {
      return createHmac("sha256", pseudonymKey).update(parts.join("\u0000")).digest("base64url").slice(0, 22);
    },
    encrypt(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return ["v1", iv, cipher.getAuthTag(), ciphertext]
        .map((part) => (typeof part === "string" ? part : part.toString("base64url")))
        .join(".");
    },
    decrypt(sealed) {
      const [version, iv, tag, ciphertext] = sealed.split(".");
      if (version !== "v1" || !iv || !tag || ciphertext === undefined)
        throw new Error("unrecognised secret format");
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([
        decipher.update(Buffer.from(ciphertext, "base64url")),
        decipher.final(),
      ]).toString("utf8");
    },
  };
}

/** What responses show of a secret: '••••' plus its last 4 characters. */
export function maskSecret(secret: string): string {
  return `••••${secret.slice(-4)}`;
}
