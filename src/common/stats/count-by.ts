import type { Model, PipelineStage } from 'mongoose';

/** One row of a `$group` by a scalar field. */
export interface GroupCount {
  _id: string | number | boolean | null;
  count: number;
}

/** `[{_id:'open', count:3}, …]` from a `$group` stage → `{open: 3, …}` (null keys are skipped). */
export function countsByKey(groups: GroupCount[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const group of groups) {
    if (group._id === null || group._id === undefined) continue;
    out[String(group._id)] = group.count;
  }
  return out;
}

/**
 * The number of matching records, and their counts by each of `fields`, in one `$facet` aggregation
 * (one round trip): `{ total, by: { status: {open: 3}, … } }`.
 */
export async function countByFields<T, F extends string>(
  model: Model<T>,
  match: PipelineStage.Match['$match'],
  fields: readonly F[],
): Promise<{ total: number; by: Record<F, Record<string, number>> }> {
  const facets: Record<string, PipelineStage.FacetPipelineStage[]> = { total: [{ $count: 'count' }] };
  for (const field of fields) facets[field] = [{ $group: { _id: `$${field}`, count: { $sum: 1 } } }];
  const [result] = await model
    .aggregate<Record<string, GroupCount[]>>([{ $match: match }, { $facet: facets }])
    .exec();
  const by = {} as Record<F, Record<string, number>>;
  for (const field of fields) by[field] = countsByKey(result?.[field] ?? []);
  return { total: result?.total?.[0]?.count ?? 0, by };
}
