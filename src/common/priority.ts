/** Priority of wants, feedback and tickets (docs/architecture.md "Priorities and statuses"). */
export const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export type Priority = (typeof PRIORITIES)[number];
