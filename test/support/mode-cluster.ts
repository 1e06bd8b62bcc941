// The black-box suite against cluster mode (docs/cluster.md): the distributed mode with two gateways
// behind a round-robin proxy and two replicas of documents and expenses.
process.env.API_MODE = 'distributed';
process.env.API_CLUSTER = '1';
