/** Priority of wants, feedback and tickets (DESIGN.md). */
export const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export type Priority = (typeof PRIORITIES)[number];

export const SORT_ORDERS = ['asc', 'desc'] as const;
export type SortOrderName = (typeof SORT_ORDERS)[number];
