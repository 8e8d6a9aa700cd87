/** A batch plan: the `email.batch.plan` job expands it into `email.send` jobs through its planner. */
export interface BatchPlan {
  /** Which registered planner expands it (`recipients` is built in). */
  kind: string;
  appId?: string | null;
  campaignId?: string;
  [field: string]: unknown;
}
