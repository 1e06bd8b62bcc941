// The one logger: JSON lines on stdout. Request bodies and credentials are never logged.
import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(service: string): Logger {
  return pino({
    name: service,
    level: process.env.LOG_LEVEL ?? (process.env.NODE_ENV === 'test' ? 'warn' : 'info'),
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['password', '*.password', 'token', '*.token', 'authorization', '*.authorization', 'credential', '*.credential'],
      censor: '[redacted]',
    },
  });
}
