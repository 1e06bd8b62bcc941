import { HttpError } from '../http/errors';
import { RouteSpec } from './route';

export const authRoutes: RouteSpec[] = [
  {
    method: 'post',
    path: '/auth/sign_in',
    operationId: 'signIn',
    authenticated: false,
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
      await identity.signOut({ token }, { requestId: ctx.requestId });
      return { status: 204 };
    },
  },
];
