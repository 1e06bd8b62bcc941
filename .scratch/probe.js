// Prints where the process is every 5 s (active handles) while identity starts.
const inspector = require('node:inspector');
setInterval(() => {
  const handles = process._getActiveHandles().map((h) => h.constructor.name + (h.remotePort ? ':' + h.remotePort : ''));
  process.stderr.write('handles ' + JSON.stringify(handles) + '\n');
}, 5000).unref();
require('../dist/deploy/distributed/main.js');
