import { Injectable } from '@nestjs/common';
import type { AudienceCriteria } from '../../contacts/audience-criteria';
import { type AudienceMember, ContactsService } from '../../contacts/contacts.service';
import { ContactEmailEvents } from '../../email/tracking/contact-email-events';
import type { SegmentFilter } from './schemas/segment.schema';

const DAY_MS = 86_400_000;

/** One batch of a walk: the members it found, and where the next batch starts (the last person read). */
export interface MemberBatch {
  people: AudienceMember[];
  cursor: string;
}

/**
 * The members of a segment (or of the whole app, with an empty filter), walked in `_id` order in batches:
 * each batch is one read of the app's subscribers by the audience index with the record filters
 * (AudienceCriteria), then, when the filter asks about engagement, one query of the batch's e-mail events.
 * A batch can hold fewer members than it read people (none, even); its cursor still moves on, so a walk
 * over a million subscribers holds one batch in memory and resumes after any batch.
 */
@Injectable()
export class SegmentMembers {
  constructor(
    private readonly contacts: ContactsService,
    private readonly events: ContactEmailEvents,
  ) {}

  async *batches(
    appId: string,
    filter: SegmentFilter,
    afterId: string | null,
    batchSize: number,
    extra: AudienceCriteria = {},
  ): AsyncGenerator<MemberBatch> {
    const criteria = { ...criteriaOf(filter), ...extra };
    if (extra.keepsTopics && filter.keepsTopics) {
      criteria.keepsTopics = [...new Set([...filter.keepsTopics, ...extra.keepsTopics])];
    }
    for await (const read of this.contacts.audience(appId, afterId, batchSize, criteria)) {
      const people = await this.engaged(appId, filter, read);
      yield { people, cursor: read[read.length - 1]._id };
    }
  }

  private async engaged(appId: string, filter: SegmentFilter, read: AudienceMember[]) {
    let people = read;
    const now = Date.now();
    const keep = async (type: 'opened' | 'clicked', since: Date | null, wanted: boolean) => {
      const ids = people.map((person) => person._id);
      const engaged = await this.events.engagedAmong(ids, appId, type, since);
      people = people.filter((person) => engaged.has(person._id) === wanted);
    };
    if (filter.openedWithinDays !== undefined) {
      await keep('opened', new Date(now - filter.openedWithinDays * DAY_MS), true);
    }
    if (filter.clickedWithinDays !== undefined) {
      await keep('clicked', new Date(now - filter.clickedWithinDays * DAY_MS), true);
    }
    if (filter.neverOpened) await keep('opened', null, false);
    return people;
  }
}

function criteriaOf(filter: SegmentFilter): AudienceCriteria {
  return {
    ...(filter.status ? { status: filter.status } : {}),
    ...(filter.source !== undefined ? { source: filter.source } : {}),
    ...(filter.locale ? { locale: filter.locale } : {}),
    ...(filter.subscribedBefore ? { subscribedBefore: filter.subscribedBefore } : {}),
    ...(filter.subscribedAfter ? { subscribedAfter: filter.subscribedAfter } : {}),
    ...(filter.keepsTopics?.length ? { keepsTopics: filter.keepsTopics } : {}),
  };
}
