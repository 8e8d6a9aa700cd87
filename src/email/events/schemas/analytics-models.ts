import {
  CampaignCounters,
  CampaignCountersSchema,
  CampaignRecipient,
  CampaignRecipientSchema,
  ContactCounters,
  ContactCountersSchema,
  DailyCounters,
  DailyCountersSchema,
  UniqueFlag,
  UniqueFlagSchema,
} from './analytics.schemas';

/** The counter collections, for `MongooseModule.forFeature` (written by EmailModule, read by the routes). */
export const ANALYTICS_MODELS = [
  { name: CampaignCounters.name, schema: CampaignCountersSchema },
  { name: DailyCounters.name, schema: DailyCountersSchema },
  { name: ContactCounters.name, schema: ContactCountersSchema },
  { name: CampaignRecipient.name, schema: CampaignRecipientSchema },
  { name: UniqueFlag.name, schema: UniqueFlagSchema },
];
