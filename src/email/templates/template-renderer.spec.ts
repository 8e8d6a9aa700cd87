import { compiledTemplatesCached, COMPILE_CACHE_LIMITS, templateCompiles } from './template-compiler';
import { TemplateProblem } from './template-limits';
import { missingVariables, renderEmailTemplate, validateTemplateSources } from './template-renderer';

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

  it('compiles a content once, whatever template carries it', () => {
    const content = template({ textTemplate: `once ${Math.random()}` });
    renderEmailTemplate(content);
    const compiles = templateCompiles();
    expect(renderEmailTemplate({ ...content }).text).toBe(content.textTemplate);
    expect(templateCompiles()).toBe(compiles);
    expect(renderEmailTemplate({ ...content, textTemplate: 'two' }).text).toBe('two');
    expect(templateCompiles()).toBe(compiles + 1);
  });

  it('bounds the cache', () => {
    for (let i = 0; i < COMPILE_CACHE_LIMITS.entries + 10; i += 1)
      renderEmailTemplate(template({ textTemplate: `bound ${i}` }));
    expect(compiledTemplatesCached()).toBe(COMPILE_CACHE_LIMITS.entries);
  });

  it('refuses an unknown helper when the template is compiled, naming the field', () => {
    expect(() =>
      renderEmailTemplate(template({ textTemplate: '{{#if x}}{{nope y}}{{/if}}' }), { x: 1 }),
    ).toThrow(/^textTemplate: .*unknown helper nope/);
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
    expect(caught).toBeInstanceOf(TemplateProblem);
    expect((caught as TemplateProblem).field).toBe(field);
    expect((caught as Error).message).toMatch(
      new RegExp(`^${field}: (Parse error|.*unknown helper|.*doesn't match)`),
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
