import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, PipelineStage } from 'mongoose';
import type { TicketStatsQuery } from './dto/ticket-input.dto';
import type { TicketStatsView } from './dto/ticket.dto';
import { shapeStats, type StatsFacet, statsRange } from './ticket-stats';
import { Ticket } from './schemas/ticket.schema';

export const RECENT_ACTIVITY_SIZE = 10;

/** `GET /{appId}/tickets/stats`: one aggregation (one round trip) over the tickets created in the range. */
@Injectable()
export class TicketStatsService {
  constructor(@InjectModel(Ticket.name) private readonly tickets: Model<Ticket>) {}

  async stats(appId: string, query: TicketStatsQuery): Promise<TicketStatsView> {
    const range = statsRange(query.startDate, query.endDate);
    const match: PipelineStage.Match['$match'] = {
      appId,
      createdAt: { $gte: range.from, $lt: range.to },
      ...(query.shopId ? { shopId: query.shopId } : {}),
    };
    const countBy = (field: string) => [{ $group: { _id: `$${field}`, count: { $sum: 1 } } }];
    const [facet] = await this.tickets
      .aggregate<StatsFacet>([
        { $match: match },
        {
          $facet: {
            total: [{ $count: 'count' }],
            byStatus: countBy('status'),
            byTopic: countBy('topic'),
            byPriority: countBy('priority'),
            recent: [
              { $sort: { createdAt: -1, _id: -1 } },
              { $limit: RECENT_ACTIVITY_SIZE },
              { $project: { subject: 1, email: 1, status: 1, priority: 1, createdAt: 1 } },
            ],
            volume: [
              {
                $group: {
                  _id: { $dateToString: { format: '%Y-%m-%d', date: '$createdAt' } },
                  count: { $sum: 1 },
                },
              },
            ],
            resolution: [
              { $match: { resolvedAt: { $ne: null } } },
              { $group: { _id: null, averageMs: { $avg: { $subtract: ['$resolvedAt', '$createdAt'] } } } },
            ],
          },
        },
      ])
      .exec();
    return shapeStats(facet, range.days);
  }
}
