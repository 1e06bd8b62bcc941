import { HttpError } from '../http/errors';
import { RouteSpec } from './route';

export const authRoutes: RouteSpec[] = [
  {
    method: 'post',
    path: '/auth/sign_in',
    operationId: 'signIn',
    authenticated: false,
    // Charged to the client address; the handler's throttle counts attempts per e-mail address.
    rateClass: 'sign_in',
    handle: async (ctx, { identity }) => {
      const body = ctx.body as { email: string; password: string };
      const session = await ctx.signIns.guard(body.email, ctx.req.res!, () =>
        identity.signIn({ email: body.email, password: body.password }, { requestId: ctx.requestId }),
      );
      return { status: 200, body: session };
    },
  },
  {
    method: 'post',
    path: '/auth/sign_out',
    operationId: 'signOut',
    handle: async (ctx, { identity }) => {
      const token = /^Bearer\s+(\S+)/i.exec(ctx.req.header('authorization') ?? '')?.[1] ?? '';
      if (ctx.principal.credential_id.startsWith('key_')) {
        throw new HttpError(422, 'not_a_session', 'sign_out ends session tokens; API keys are revoked in the app');
      }
      try {
        await identity.signOut({ token }, { requestId: ctx.requestId });
      } finally {
        // Before the answer, and whatever identity answered (a timeout may have signed out): this
        // gateway asks identity again on the next request instead of trusting its cache for a TTL.
        ctx.forgetCredential(ctx.principal.credential_id);
      }
      return { status: 204 };
    },
  },
];
