// Cryptographic capabilities the identity domain needs, kept behind ports so the domain stays pure.

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** Constant-time comparison against a stored hash. */
  verify(password: string, stored: string): Promise<boolean>;
}

export interface SessionClaims {
  userId: number;
  sessionId: number;
  expiresAt: Date;
}

export interface SessionSigner {
  sign(claims: SessionClaims): Promise<string>;
  /** The claims of a token with a valid signature; throws ExpiredSession or InvalidSession. */
  verify(token: string): Promise<SessionClaims>;
}

export class ExpiredSession extends Error {}
export class InvalidSession extends Error {}

export interface RandomSource {
  bytes(count: number): Uint8Array;
}
