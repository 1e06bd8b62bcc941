// Preloaded (`node --require`) into every process a test system starts (system.ts startProcess): the
// process ends when the test process that started it is gone. Its own 'exit' handler kills its children,
// but jest force-kills a worker that does not exit in time, and a SIGKILLed worker runs no handler — its
// services then ran on, orphaned, holding ports, the databases and the CPU of the rest of the run.
const parent = process.ppid;
setInterval(() => {
  // Reparented: the starter died. SIGTERM is the services' own graceful stop.
  if (process.ppid !== parent) process.kill(process.pid, 'SIGTERM');
}, 1000).unref();
