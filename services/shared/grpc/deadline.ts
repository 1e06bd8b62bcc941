// The caller's deadline, carried through every hop. grpc-js sends a call's deadline as its
// `grpc-timeout` header; the server reads it back (`call.getDeadline()`), the handler gets it as
// `ctx.deadline`, and a call the handler makes onwards passes it as `CallOptions.deadline`, so the
// next service gets the same end, never a fresh 10 s. A call whose deadline has passed when it
// reaches its handler is answered DEADLINE_EXCEEDED without running (typed.ts); domain code checks
// it again before queueing (services/shared/deadline.ts).
import type { Deadline } from '@grpc/grpc-js';

/** A server call's deadline in ms since the epoch, or undefined when the caller set none. */
export function deadlineOfCall(call: { getDeadline(): Deadline }): number | undefined {
  const deadline = call.getDeadline();
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(at) ? at : undefined;
}

/** The deadline of an outgoing call: `timeoutMs` from now, but never later than the caller's own. */
export function outgoingDeadline(callerDeadline: number | undefined, timeoutMs: number): number {
  const own = Date.now() + timeoutMs;
  return callerDeadline !== undefined && callerDeadline < own ? callerDeadline : own;
}
