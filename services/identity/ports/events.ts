// Notifications the identity domain emits; gateways drop cached principals and workspace access on them.
export interface IdentityEvents {
  credentialRevoked(credentialId: string, accountId: number): Promise<void>;
  workspaceChanged(accountId: number, userId?: number): Promise<void>;
}
