import { NotFoundException } from '@nestjs/common';
import { isValidObjectId, Model } from 'mongoose';

/**
 * Lookups and updates of one record of one app by `_id`. A malformed id, an unknown id and another app's
 * record all answer the same 404, so ids of other tenants cannot be probed.
 */
export async function findScoped<T extends { appId: string }>(
  model: Model<T>,
  appId: string,
  id: string,
  notFound: string,
): Promise<T> {
  const found = isValidObjectId(id) ? await model.findOne({ _id: id, appId }).lean<T>().exec() : null;
  if (!found) throw new NotFoundException(notFound);
  return found;
}

export async function updateScoped<T extends { appId: string }>(
  model: Model<T>,
  appId: string,
  id: string,
  fields: Record<string, unknown>,
  notFound: string,
): Promise<T> {
  const updated = isValidObjectId(id)
    ? await model
        .findOneAndUpdate({ _id: id, appId }, { $set: fields }, { new: true, runValidators: true })
        .lean<T>()
        .exec()
    : null;
  if (!updated) throw new NotFoundException(notFound);
  return updated;
}
