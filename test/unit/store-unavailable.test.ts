// An unreachable database is a temporary condition, not a bug: the Mongo adapter turns the driver's
// "cannot reach the server" errors into StoreUnavailable, which leaves a service as UNAVAILABLE with a
// retry hint, which the gateway answers as 503 with Retry-After — never a 500.
import { status } from '@grpc/grpc-js';
import mongoose from 'mongoose';
import { ErrorDetail } from '../../gen/invoicing/common/v1/common';
import { httpErrorFromRemote } from '../../gateway/http/errors';
import { ERROR_TRAILER, fromServiceError, toServiceError } from '../../services/shared/grpc/errors';
import { isUnreachable } from '../../services/shared/store/mongo';
import { StoreUnavailable } from '../../services/shared/store/port';

const { MongoServerSelectionError, MongoNetworkError, MongoNetworkTimeoutError, MongoServerError } = mongoose.mongo;

describe('the Mongo adapter: which driver errors mean the database is unreachable', () => {
  it('what the driver throws for a server nobody listens on does (server selection timeout)', async () => {
    const client = new mongoose.mongo.MongoClient('mongodb://127.0.0.1:1/x', { serverSelectionTimeoutMS: 200 });
    const err = await client.db('x').collection('y').findOne({}).then(() => undefined, (e: unknown) => e);
    await client.close();
    expect(err).toBeInstanceOf(MongoServerSelectionError);
    expect(isUnreachable(err)).toBe(true);
  });

  it('network errors do', () => {
    expect(isUnreachable(new MongoNetworkError('connection 3 to 127.0.0.1:1 closed'))).toBe(true);
    expect(isUnreachable(new MongoNetworkTimeoutError('connection timed out'))).toBe(true);
  });

  it('a server’s refusal (duplicate key, bad query) and plain errors do not', () => {
    expect(isUnreachable(new MongoServerError({ message: 'E11000 duplicate key', code: 11000 }))).toBe(false);
    expect(isUnreachable(new Error('boom'))).toBe(false);
  });
});

describe('StoreUnavailable through gRPC and the gateway', () => {
  it('becomes UNAVAILABLE with a retry hint, then 503 with Retry-After', () => {
    const { error, expected } = toServiceError(new StoreUnavailable(new MongoNetworkError('closed')));
    expect(expected).toBe(true);
    expect(error.code).toBe(status.UNAVAILABLE);
    const detail = ErrorDetail.decode(error.metadata!.get(ERROR_TRAILER)[0] as Buffer);
    expect(detail).toMatchObject({ code: 'service_unavailable', metadata: { retry_after_seconds: '1' } });

    const http = httpErrorFromRemote(fromServiceError(error as never), 'https://example.com/upgrade');
    expect(http.status).toBe(503);
    expect(http.code).toBe('service_unavailable');
    expect(http.headers['retry-after']).toBe('1');
  });

  it('an unexpected store error stays INTERNAL (500): only unreachability is retryable', () => {
    expect(toServiceError(new Error('boom')).error.code).toBe(status.INTERNAL);
  });
});
