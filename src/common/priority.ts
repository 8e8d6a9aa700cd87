/** Priority of wants, feedback and tickets (DESIGN.md). */
export const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export type Priority = (typeof PRIORITIES)[number];
