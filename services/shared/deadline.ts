// The caller's deadline as domain code sees it: ms since the epoch, or undefined when the caller set
// none. The gRPC layer reads it from the call and passes it on to every onward call
// (services/shared/grpc/deadline.ts); domain code drops work whose caller has given up before it
// takes a queue slot or a store round trip — its answer would reach nobody.
import { DomainError } from './errors';

export const deadlinePassed = (deadline: number | undefined, now = Date.now()): boolean => deadline !== undefined && now >= deadline;

export const deadlineExceeded = () =>
  new DomainError('deadline_exceeded', 'deadline_exceeded', 'the caller gave up waiting (its deadline passed); the request was dropped unapplied');

/** Throws DEADLINE_EXCEEDED when the caller's deadline has passed. */
export function checkDeadline(deadline: number | undefined): void {
  if (deadlinePassed(deadline)) throw deadlineExceeded();
}
