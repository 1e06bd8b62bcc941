// The key of an index over a collection's declared fields, in the shape the Mongo adapter's own lazy
// creation uses (services/shared/store/mongo.ts, MongoCollection.ensureIndexes): the fields ascending, then
// `_id` descending, the tie-breaker of every list. Same keys → same index name, so the adapter's
// createIndex on an initialised database is a no-op (checked by test/system/init-job.test.ts).
export function indexKeys(fields: string[]): Record<string, 1 | -1> {
  return Object.fromEntries([...fields.map((f) => [f, 1] as const), ['_id', -1] as const]);
}
