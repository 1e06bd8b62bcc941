// Which workspaces have queued deliveries: the shared per-workspace lanes (services/shared/work-lanes.ts)
// in their own collection. Every accepted request touches its lane; a dispatcher retires a lane it found
// empty (docs/rendering.md "Dispatch order").
import { WorkLanes, workLanesSpec } from '../../shared/work-lanes';
import type { MailLane } from '../ports/mail';

export const mailLanesSpec = workLanesSpec<MailLane>('mail_lanes');

export class MailLanes extends WorkLanes<MailLane> {}
