// What the identity domain needs to emit events: gateways drop cached principals and workspace access on
// them. Events are written into the outbox of the record that changes (same write); a relay publishes them.
export interface IdentityEvents {
  /** A fresh event id (UUID), fixed when the event is written. */
  newId(): string;
  /** Wakes the outbox relay after a write that carries events. */
  written(): void;
}
