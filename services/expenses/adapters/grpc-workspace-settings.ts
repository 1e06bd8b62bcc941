// The WorkspaceSettings port over gRPC: the documents service's effective settings (DocumentSettingsService).
import { status as GrpcStatus } from '@grpc/grpc-js';
import { DocumentSettingsServiceService } from '../../../gen/invoicing/documents/v1/documents';
import { DomainError } from '../../shared/errors';
import { RemoteCallError, toDomainError } from '../../shared/grpc/errors';
import { AsyncClient, connect } from '../../shared/grpc/typed';
import { Tenant } from '../../shared/tenant';
import { WorkspaceSettings } from '../ports/workspace-settings';

const unavailable = () => new DomainError('unavailable', 'service_unavailable', 'the documents service is unavailable');

export class GrpcWorkspaceSettings implements WorkspaceSettings {
  private readonly documents?: AsyncClient<typeof DocumentSettingsServiceService> & { close(): void };

  constructor(address: string | undefined) {
    if (address) this.documents = connect(DocumentSettingsServiceService, 'invoicing.documents.v1.DocumentSettingsService', address);
  }

  async currency(tenant: Tenant): Promise<string> {
    if (!this.documents) throw unavailable();
    try {
      const res = await this.documents.getEffectiveSettings({ account_id: tenant.account_id });
      return res.settings?.currency || 'EUR';
    } catch (err) {
      // Unreachable is 503 (retryable), never INTERNAL; anything else the documents service says passes through.
      if (err instanceof RemoteCallError && [GrpcStatus.UNAVAILABLE, GrpcStatus.DEADLINE_EXCEEDED].includes(err.status)) throw unavailable();
      if (err instanceof RemoteCallError) throw toDomainError(err);
      throw err;
    }
  }

  close(): void {
    this.documents?.close();
  }
}
