import type { WantStatus } from './schemas/want.schema';

/** Domain events of the wants board, for chat notifications (channel `wants`). */
export const WantEvents = {
  Created: 'want.created',
  StatusChanged: 'want.status_changed',
} as const;

export interface WantCreatedEvent {
  appId: string;
  wantId: string;
  title: string;
  category: string;
}

export interface WantStatusChangedEvent {
  appId: string;
  wantId: string;
  title: string;
  from: WantStatus;
  to: WantStatus;
}
