// The ExtractionFailure an extraction promise rejects with (and a failed expectation if it resolves).
import { ExtractionFailure } from '../../services/expenses/ports/extractor';

export async function failure(promise: Promise<unknown>): Promise<ExtractionFailure> {
  const error = await promise.then(
    () => null,
    (e) => e,
  );
  expect(error).toBeInstanceOf(ExtractionFailure);
  return error as ExtractionFailure;
}
