// kafkajs logs through the shared logger: its levels mapped to pino's, its entry fields kept (broker,
// group, topic, error), and only the levels the logger would print are even built by kafkajs.
import { logLevel as KafkaLevel, LogEntry } from 'kafkajs';
import { Logger } from '../logger';

const PINO_OF: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [KafkaLevel.ERROR]: 'error',
  [KafkaLevel.WARN]: 'warn',
  [KafkaLevel.INFO]: 'info',
  [KafkaLevel.DEBUG]: 'debug',
};

/** The kafkajs level matching the logger's threshold (pino `silent`/`fatal` → nothing). */
export function kafkaLevelOf(log: Logger): KafkaLevel {
  switch (log.level) {
    case 'trace':
    case 'debug':
      return KafkaLevel.DEBUG;
    case 'info':
      return KafkaLevel.INFO;
    case 'warn':
      return KafkaLevel.WARN;
    case 'error':
      return KafkaLevel.ERROR;
    default:
      return KafkaLevel.NOTHING;
  }
}

/** A kafkajs logCreator writing to `log` (child `component: kafka`). */
export function kafkaLogCreator(log: Logger) {
  const kafkaLog = log.child({ component: 'kafka' });
  return () =>
    ({ level, namespace, log: entry }: LogEntry) => {
      const method = PINO_OF[level];
      if (!method) return;
      const { message, timestamp: _timestamp, logger: _logger, ...fields } = entry as LogEntry['log'] & { logger?: unknown };
      kafkaLog[method]({ kafka_namespace: namespace, ...fields }, message);
    };
}
