// The workspace's defaults an expense takes when the client sends none: its currency, the one documents
// default to (stored setting, else from the supplier's country). Owned by the documents service.
import { Tenant } from '../../shared/tenant';

export interface WorkspaceSettings {
  /** ISO 4217 code of the workspace currency. */
  currency(tenant: Tenant): Promise<string>;
}
