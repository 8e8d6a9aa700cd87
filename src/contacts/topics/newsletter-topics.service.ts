import { BadRequestException, Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model } from 'mongoose';
import { AppsService } from '../../apps/apps.service';
import type { NewsletterTopicDto } from './dto/newsletter-topics.dto';
import { type NewsletterTopic, NewsletterTopics } from './newsletter-topics.schema';

/**
 * An app's newsletter topics (docs/api/newsletters.md "Topics"): a campaign names one, and a person keeps
 * or drops each on the preference page. Removing a topic leaves people's choices about it in place (and in
 * the ledger); a campaign can no longer name it.
 */
@Injectable()
export class NewsletterTopicsService {
  constructor(
    @InjectModel(NewsletterTopics.name) private readonly topics: Model<NewsletterTopics>,
    private readonly apps: AppsService,
  ) {}

  async list(appId: string): Promise<NewsletterTopic[]> {
    const found = await this.topics.findById(appId).lean<NewsletterTopics>().exec();
    return found?.topics ?? [];
  }

  /** The list for an admin route: 404 for an unknown app. */
  async listForApp(appId: string): Promise<NewsletterTopic[]> {
    await this.apps.requireApp(appId);
    return this.list(appId);
  }

  async replace(appId: string, topics: NewsletterTopicDto[]): Promise<NewsletterTopic[]> {
    await this.apps.requireApp(appId);
    const keys = topics.map((topic) => topic.key);
    const repeated = keys.find((key, index) => keys.indexOf(key) !== index);
    if (repeated !== undefined) throw new BadRequestException(`topics: the key ${repeated} appears twice`);
    const saved = await this.topics
      .findOneAndUpdate(
        { _id: appId },
        { $set: { topics: topics.map(({ key, name }) => ({ key, name })) } },
        { upsert: true, returnDocument: 'after' },
      )
      .lean<NewsletterTopics>()
      .orFail()
      .exec();
    return saved.topics;
  }

  /** 400 naming `field` unless `key` is one of the app's topics. */
  async requireTopic(appId: string, key: string, field: string): Promise<void> {
    const topics = await this.list(appId);
    if (!topics.some((topic) => topic.key === key)) {
      throw new BadRequestException(`${field}: no newsletter topic with this key in this app`);
    }
  }
}
