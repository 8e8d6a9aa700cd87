import { Model } from 'mongoose';
import { findByIdOr404 } from '../database/object-id';

/**
 * Lookups and updates of one record of one app by `_id`. A malformed id, an unknown id and another app's
 * record all answer the same 404, so ids of other tenants cannot be probed.
 */
export function findScoped<T extends { appId: string }>(
  model: Model<T>,
  appId: string,
  id: string,
  notFound: string,
): Promise<T> {
  return findByIdOr404(id, notFound, (_id) => model.findOne({ _id, appId }).lean<T>().exec());
}

export function updateScoped<T extends { appId: string }>(
  model: Model<T>,
  appId: string,
  id: string,
  fields: Record<string, unknown>,
  notFound: string,
): Promise<T> {
  return findByIdOr404(id, notFound, (_id) =>
    model
      .findOneAndUpdate({ _id, appId }, { $set: fields }, { returnDocument: 'after', runValidators: true })
      .lean<T>()
      .exec(),
  );
}
