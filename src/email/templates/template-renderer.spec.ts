import { Types } from 'mongoose';
import {
  missingVariables,
  renderEmailTemplate,
  TEMPLATE_CACHE_SIZE,
  TemplateCompileError,
  templateCacheSize,
  validateTemplateSources,
} from './template-renderer';

const template = (overrides: Record<string, unknown> = {}) => ({
  subject: 'Hello {{firstName}} & co',
  htmlTemplate: '<p>Hi {{firstName}}, {{{signature}}} {{#if vip}}VIP{{/if}}</p>',
  textTemplate: 'Hi {{firstName}} & {{order.total}}',
  ...overrides,
});

describe('renderEmailTemplate', () => {
  it('escapes HTML in the html body only', () => {
    const out = renderEmailTemplate(template(), {
      firstName: 'Tom & <Jerry>',
      signature: '<b>Team</b>',
      vip: true,
      order: { total: '5 €' },
    });
    expect(out.html).toBe('<p>Hi Tom &amp; &lt;Jerry&gt;, <b>Team</b> VIP</p>');
    expect(out.text).toBe('Hi Tom & <Jerry> & 5 €');
    expect(out.subject).toBe('Hello Tom & <Jerry> & co');
  });

  it('renders missing variables as empty strings', () => {
    expect(renderEmailTemplate(template(), {})).toEqual({
      subject: 'Hello  & co',
      html: '<p>Hi ,  </p>',
      text: 'Hi  & ',
    });
  });

  it('keeps the subject on one line', () => {
    expect(renderEmailTemplate(template(), { firstName: 'A\r\nBcc: x@example.com' }).subject).toBe(
      'Hello A Bcc: x@example.com & co',
    );
  });

  it('does not expose prototype properties', () => {
    const out = renderEmailTemplate(template({ textTemplate: '{{constructor.name}}|{{__proto__}}' }), {});
    expect(out.text).toBe('|');
  });

  it('caches by _id and updatedAt, and never serves a stale body', () => {
    const _id = new Types.ObjectId();
    const updatedAt = new Date();
    const before = templateCacheSize();
    expect(renderEmailTemplate(template({ _id, updatedAt, textTemplate: 'one' })).text).toBe('one');
    expect(templateCacheSize()).toBe(before + 1);
    expect(renderEmailTemplate(template({ _id, updatedAt, textTemplate: 'two' })).text).toBe('two');
    const later = new Date(updatedAt.getTime() + 1);
    expect(renderEmailTemplate(template({ _id, updatedAt: later, textTemplate: 'three' })).text).toBe(
      'three',
    );
  });

  it('bounds the cache', () => {
    const updatedAt = new Date();
    for (let i = 0; i < TEMPLATE_CACHE_SIZE + 10; i += 1)
      renderEmailTemplate(template({ _id: new Types.ObjectId(), updatedAt }));
    expect(templateCacheSize()).toBe(TEMPLATE_CACHE_SIZE);
  });

  it('names the field of a run-time failure', () => {
    expect(() =>
      renderEmailTemplate(template({ textTemplate: '{{#if x}}{{nope y}}{{/if}}' }), { x: 1 }),
    ).toThrow(/^textTemplate: Missing helper: "nope"/);
  });
});

describe('validateTemplateSources', () => {
  it('accepts valid templates and skips absent fields', () => {
    expect(() => validateTemplateSources(template())).not.toThrow();
    expect(() => validateTemplateSources({ subject: 'Hi' })).not.toThrow();
  });

  it.each([
    ['subject', '{{#if x}}'],
    ['htmlTemplate', '<p>{{name</p>'],
    ['textTemplate', '{{/each}}'],
    ['htmlTemplate', '{{unknownHelper arg}}'],
  ] as const)('rejects a %s that does not compile', (field, source) => {
    let caught: unknown;
    try {
      validateTemplateSources({ ...template(), [field]: source });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(TemplateCompileError);
    expect((caught as TemplateCompileError).field).toBe(field);
    expect((caught as Error).message).toMatch(
      new RegExp(`^${field}: (Parse error|Missing helper|.*doesn't match)`),
    );
  });
});

describe('missingVariables', () => {
  it('lists declared paths without a value', () => {
    expect(
      missingVariables(['firstName', 'order.total', 'order.id', 'x.y', 'constructor'], {
        firstName: 'A',
        order: { total: 0, id: null },
        x: 'str',
      }),
    ).toEqual(['order.id', 'x.y', 'constructor']);
  });
});
