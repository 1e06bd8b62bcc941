// The black-box suite against cluster mode (docs/cluster.md): the distributed mode with two gateways
// behind a round-robin proxy and two replicas of documents and expenses.
process.env.API_MODE = 'distributed';
process.env.API_CLUSTER = '1';
// A file's system is nine processes started tier by tier (engines connected, indexes made, consumer
// groups joined): on a loaded 2-core machine that alone can pass the 120 s the other projects allow a hook.
jest.setTimeout(300_000);
