import { literalSource } from '../../common/database/text-pattern';
import { BadRequestException, Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { type Model, type QueryFilter, trusted, type UpdateQuery } from 'mongoose';
import { AppsService } from '../../apps/apps.service';
import { findByIdOr404 } from '../../common/database/object-id';
import { patchUpdate } from '../../common/database/patch-update';
import type { Pagination } from '../../common/http/envelope';
import { findPage } from '../../common/pagination/pagination';
import type {
  CreateEmailTemplateDto,
  DuplicateEmailTemplateDto,
  ListEmailTemplatesQuery,
  ReplaceEmailTemplateDto,
  TemplateCategoryView,
  TemplateSenderDto,
  UpdateEmailTemplateDto,
} from './dto/email-template.dto';
import {
  DEFAULT_LANGUAGE,
  EmailTemplate,
  NAME_MAX,
  TEMPLATE_LANGUAGES,
  type TemplateLanguage,
  type TemplateSender,
} from './schemas/email-template.schema';
import { SendingIdentities } from '../../sender-domains/sending-identities';
import { TemplateProblem } from './template-limits';
import { renderEmailTemplate, type RenderedEmail, validateTemplateSources } from './template-renderer';
import { duplicateRecordMessage } from '../../common/http/all-exceptions.filter';

const NOT_FOUND = 'Template not found';
const COPY_SUFFIX = ' (copy)';

/** `undefined`-valued keys dropped (DTO instances define every declared field). */
const defined = <T extends object>(value: T): Partial<T> =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;

const senderOf = (sender: TemplateSenderDto): TemplateSender =>
  sender.name === undefined ? { email: sender.email } : { name: sender.name, email: sender.email };

/** The 409 of a write to a scope, name and language already taken (the unique index's fields). */
export const DUPLICATE_TEMPLATE = duplicateRecordMessage(['appId', 'name', 'language']);

/**
 * E-mail templates, global (`appId: null`) or of one app, one per scope, name and language. Every lookup by
 * id is confined to one scope: a template of another scope is a 404. Other modules send with
 * `resolveForSending` + `render`.
 */
@Injectable()
export class EmailTemplatesService {
  constructor(
    @InjectModel(EmailTemplate.name) private readonly templates: Model<EmailTemplate>,
    private readonly apps: AppsService,
    private readonly identities: SendingIdentities,
  ) {}

  /** A sender is checked like an app's: on a verified domain of the scope's app, or on MAIL_FROM's. */
  private async checkSender(appId: string | null, sender: TemplateSenderDto | null | undefined) {
    if (sender) await this.identities.assertMayUse(appId, sender.email, 'sender.email');
  }

  /** Languages of the scope's templates with their counts, in the order of TEMPLATE_LANGUAGES. */
  async categories(appId: string | null): Promise<TemplateCategoryView[]> {
    const groups = await this.templates
      .aggregate<{ _id: TemplateCategoryView['language'] | null; count: number }>([
        { $match: { appId } },
        { $group: { _id: '$language', count: { $sum: 1 } } },
      ])
      .exec();
    return groups
      .filter((group) => group._id !== null)
      .map((group) => ({ language: group._id!, count: group.count }))
      .sort((a, b) => TEMPLATE_LANGUAGES.indexOf(a.language) - TEMPLATE_LANGUAGES.indexOf(b.language));
  }

  /** One scope's templates (global when `appId` is omitted), by name then language. */
  list(query: ListEmailTemplatesQuery): Promise<{ items: EmailTemplate[]; pagination: Pagination }> {
    const filter: QueryFilter<EmailTemplate> = { appId: query.appId ?? null };
    if (query.language) filter.language = query.language;
    if (query.isActive !== undefined) filter.isActive = query.isActive;
    if (query.search) {
      const pattern = trusted({ $regex: literalSource(query.search), $options: 'i' });
      filter.$or = [{ name: pattern }, { subject: pattern }];
    }
    return findPage(this.templates, {
      filter,
      sort: { name: 1, language: 1 },
      // One template per scope, name and language (the unique index): ties cannot happen.
      uniqueSort: true,
      page: query.page,
      limit: query.limit,
      after: query.after,
    });
  }

  /** A taken scope + name + language is a 409 (unique index); an unknown app is a 404. */
  async create(dto: CreateEmailTemplateDto): Promise<EmailTemplate> {
    const appId = await this.targetScope(dto.appId);
    await this.validateSources(dto);
    await this.checkSender(appId, dto.sender);
    const { sender, ...fields } = defined(dto);
    const created = await this.templates.create({
      ...fields,
      appId,
      ...(sender ? { sender: senderOf(sender) } : {}),
    });
    return created.toObject<EmailTemplate>();
  }

  get(id: string, appId: string | null): Promise<EmailTemplate> {
    return findByIdOr404(id, NOT_FOUND, (_id) =>
      this.templates.findOne({ _id, appId }).lean<EmailTemplate>().exec(),
    );
  }

  /** Full replacement within the scope; omitted optional fields return to their defaults. */
  async replace(id: string, appId: string | null, dto: ReplaceEmailTemplateDto): Promise<EmailTemplate> {
    this.checkSameScope(dto.appId, appId);
    await this.validateSources(dto);
    await this.checkSender(appId, dto.sender);
    const set: Record<string, unknown> = {
      name: dto.name,
      language: dto.language,
      subject: dto.subject,
      htmlTemplate: dto.htmlTemplate,
      textTemplate: dto.textTemplate,
      variables: dto.variables ?? [],
      isActive: dto.isActive ?? true,
    };
    if (dto.sender) set.sender = senderOf(dto.sender);
    return this.write(id, appId, set, dto.sender ? [] : ['sender'], dto.version);
  }

  /** The fields sent only; `sender: null` removes the sender, `null` elsewhere is a 400. */
  async update(id: string, appId: string | null, dto: UpdateEmailTemplateDto): Promise<EmailTemplate> {
    this.checkSameScope(dto.appId, appId);
    const { appId: _scope, ...changes } = dto;
    const { $set, $unset } = patchUpdate(changes, ['sender']);
    const { version, sender, ...fields } = $set;
    if (Object.keys(fields).length === 0 && !sender && !$unset && version === undefined) {
      return this.get(id, appId);
    }
    await this.validateSources(fields);
    await this.checkSender(appId, sender);
    const set: Record<string, unknown> = { ...fields };
    if (sender) set.sender = senderOf(sender);
    return this.write(id, appId, set, Object.keys($unset ?? {}), version);
  }

  async remove(id: string, appId: string | null): Promise<void> {
    await findByIdOr404(id, NOT_FOUND, (_id) =>
      this.templates
        .findOneAndDelete({ _id, appId }, { projection: { _id: 1 } })
        .lean()
        .exec(),
    );
  }

  /** Sets `isActive` to the value sent (not a content change: `version` stays). */
  toggle(id: string, appId: string | null, isActive: boolean): Promise<EmailTemplate> {
    return findByIdOr404(id, NOT_FOUND, (_id) =>
      this.templates
        .findOneAndUpdate({ _id, appId }, { $set: { isActive } }, { returnDocument: 'after' })
        .lean<EmailTemplate>()
        .exec(),
    );
  }

  /**
   * A copy of the template `id` (looked up in any scope) into the scope `dto.appId` (global when null or
   * omitted), named `dto.name` or `<name> (copy)`, same language, at version 1. A taken name is a 409.
   */
  async duplicate(id: string, dto: DuplicateEmailTemplateDto): Promise<EmailTemplate> {
    const source = await findByIdOr404(id, NOT_FOUND, (_id) =>
      this.templates.findById(_id).lean<EmailTemplate>().exec(),
    );
    const appId = await this.targetScope(dto.appId);
    await this.validateSources(source);
    await this.checkSender(appId, source.sender);
    const name = dto.name ?? `${source.name.slice(0, NAME_MAX - COPY_SUFFIX.length)}${COPY_SUFFIX}`;
    const created = await this.templates.create({
      appId,
      name,
      language: source.language,
      subject: source.subject,
      htmlTemplate: source.htmlTemplate,
      textTemplate: source.textTemplate,
      variables: source.variables ?? [],
      isActive: source.isActive,
      version: 1,
      ...(source.sender ? { sender: senderOf(source.sender) } : {}),
    });
    return created.toObject<EmailTemplate>();
  }

  /**
   * The active template to send for an app (or `null`: global only), a template name and a language:
   * app + language → app + `en` → global + language → global + `en`; `null` when none is active.
   * One query; the candidates are ranked in code.
   */
  async resolveForSending(
    appId: string | null,
    name: string,
    language: string,
  ): Promise<EmailTemplate | null> {
    // An unknown language matches nothing and falls through to `en`.
    const candidates: { appId: string | null; language: TemplateLanguage }[] = [];
    for (const scope of appId ? [appId, null] : [null]) {
      for (const lang of [language as TemplateLanguage, DEFAULT_LANGUAGE]) {
        if (!candidates.some((c) => c.appId === scope && c.language === lang))
          candidates.push({ appId: scope, language: lang });
      }
    }
    const found = await this.templates
      .find({ name, isActive: true, $or: candidates })
      .lean<EmailTemplate[]>()
      .exec();
    for (const candidate of candidates) {
      const match = found.find(
        (t) => (t.appId ?? null) === candidate.appId && t.language === candidate.language,
      );
      if (match) return match;
    }
    return null;
  }

  /** `{subject, html, text}` (see template-renderer.ts: missing variables render empty). */
  render(template: EmailTemplate, variables: Record<string, unknown> = {}): Promise<RenderedEmail> {
    return renderEmailTemplate(template, variables);
  }

  /** The scope a template is created in: `null` (global) or an existing app (404 otherwise). */
  private async targetScope(appId: string | null | undefined): Promise<string | null> {
    if (appId === undefined || appId === null) return null;
    await this.apps.requireApp(appId);
    return appId;
  }

  /** A template never changes scope through PUT or PATCH: a body `appId` must name the addressed scope. */
  private checkSameScope(bodyAppId: string | null | undefined, scope: string | null): void {
    if (bodyAppId !== undefined && (bodyAppId ?? null) !== scope)
      throw new BadRequestException('appId must equal the scope of the template (the appId query parameter)');
  }

  private async validateSources(
    sources: Partial<Record<'subject' | 'htmlTemplate' | 'textTemplate', unknown>>,
  ): Promise<void> {
    try {
      await validateTemplateSources({
        subject: sources.subject as string | undefined,
        htmlTemplate: sources.htmlTemplate as string | undefined,
        textTemplate: sources.textTemplate as string | undefined,
      });
    } catch (error) {
      if (error instanceof TemplateProblem) throw new BadRequestException(error.message);
      throw error;
    }
  }

  private async write(
    id: string,
    appId: string | null,
    set: Record<string, unknown>,
    unset: string[],
    version: number | undefined,
  ): Promise<EmailTemplate> {
    const update: UpdateQuery<EmailTemplate> = {
      $set: version === undefined ? set : { ...set, version },
      ...(unset.length ? { $unset: Object.fromEntries(unset.map((field) => [field, 1])) } : {}),
      ...(version === undefined ? { $inc: { version: 1 } } : {}),
    };
    return findByIdOr404(id, NOT_FOUND, (_id) =>
      this.templates
        .findOneAndUpdate({ _id, appId }, update, { returnDocument: 'after', runValidators: true })
        .lean<EmailTemplate>()
        .exec(),
    );
  }
}
