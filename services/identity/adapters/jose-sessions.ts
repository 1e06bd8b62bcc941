// Session JWTs (HS256) with jose. Issuer and audience are both set and both required: a token signed
// with the same secret for another purpose (another audience, or none) is not a session of this API.
import { errors, jwtVerify, SignJWT } from 'jose';
import { ExpiredSession, InvalidSession, SessionClaims, SessionSigner } from '../ports/security';

const ISSUER = 'invoicing';
/** The audience of a session token: the HTTP API. */
export const SESSION_AUDIENCE = 'invoicing-api';

export class JoseSessionSigner implements SessionSigner {
  private readonly key: Uint8Array;

  constructor(secret: string) {
    // loadSecrets checks this already; the signer refuses a weak key whoever constructs it.
    if (Buffer.byteLength(secret, 'utf8') < 32) throw new Error('the session signing secret must be at least 32 bytes');
    this.key = new TextEncoder().encode(secret);
  }

  sign(claims: SessionClaims): Promise<string> {
    return new SignJWT({ sid: claims.sessionId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(String(claims.userId))
      .setIssuer(ISSUER)
      .setAudience(SESSION_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(Math.floor(claims.expiresAt.getTime() / 1000))
      .sign(this.key);
  }

  async verify(token: string): Promise<SessionClaims> {
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: ISSUER, audience: SESSION_AUDIENCE, algorithms: ['HS256'] });
      const userId = Number(payload.sub);
      const sessionId = Number(payload.sid);
      if (!Number.isSafeInteger(userId) || !Number.isSafeInteger(sessionId)) throw new InvalidSession('bad claims');
      return { userId, sessionId, expiresAt: new Date((payload.exp ?? 0) * 1000) };
    } catch (err) {
      if (err instanceof errors.JWTExpired) throw new ExpiredSession('expired');
      throw new InvalidSession('invalid');
    }
  }
}
