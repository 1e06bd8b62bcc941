// Session JWTs (HS256) with jose.
import { errors, jwtVerify, SignJWT } from 'jose';
import { ExpiredSession, InvalidSession, SessionClaims, SessionSigner } from '../ports/security';

const ISSUER = 'invoicing';

export class JoseSessionSigner implements SessionSigner {
  private readonly key: Uint8Array;

  constructor(secret: string) {
    this.key = new TextEncoder().encode(secret);
  }

  sign(claims: SessionClaims): Promise<string> {
    return new SignJWT({ sid: claims.sessionId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(String(claims.userId))
      .setIssuer(ISSUER)
      .setIssuedAt()
      .setExpirationTime(Math.floor(claims.expiresAt.getTime() / 1000))
      .sign(this.key);
  }

  async verify(token: string): Promise<SessionClaims> {
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: ISSUER, algorithms: ['HS256'] });
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
