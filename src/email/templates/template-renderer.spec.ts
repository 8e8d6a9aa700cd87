import { TemplateProblem } from './template-limits';
import { missingVariables, renderEmailTemplate, validateTemplateSources } from './template-renderer';

const template = (overrides: Record<string, unknown> = {}) => ({
  subject: 'Hello {{firstName}} & co',
  htmlTemplate: '<p>Hi {{firstName}}, {{{signature}}} {{#if vip}}VIP{{/if}}</p>',
  textTemplate: 'Hi {{firstName}} & {{order.total}}',
  ...overrides,
});

describe('renderEmailTemplate', () => {
  it('escapes HTML in the html body only', async () => {
    const out = await renderEmailTemplate(template(), {
      firstName: 'Tom & <Jerry>',
      signature: '<b>Team</b>',
      vip: true,
      order: { total: '5 €' },
    });
    expect(out.html).toBe('<p>Hi Tom &amp; &lt;Jerry&gt;, <b>Team</b> VIP</p>');
    expect(out.text).toBe('Hi Tom & <Jerry> & 5 €');
    expect(out.subject).toBe('Hello Tom & <Jerry> & co');
  });

  it('renders missing variables as empty strings', async () => {
    expect(await renderEmailTemplate(template(), {})).toEqual({
      subject: 'Hello  & co',
      html: '<p>Hi ,  </p>',
      text: 'Hi  & ',
    });
  });

  it('keeps the subject on one line', async () => {
    expect((await renderEmailTemplate(template(), { firstName: 'A\r\nBcc: x@example.com' })).subject).toBe(
      'Hello A Bcc: x@example.com & co',
    );
  });

  it('does not expose prototype properties', async () => {
    const out = await renderEmailTemplate(
      template({ textTemplate: '{{constructor.name}}|{{__proto__}}' }),
      {},
    );
    expect(out.text).toBe('|');
  });

  it('refuses an unknown helper when the template is compiled, naming the field', async () => {
    await expect(
      renderEmailTemplate(template({ textTemplate: '{{#if x}}{{nope y}}{{/if}}' }), { x: 1 }),
    ).rejects.toThrow(/^textTemplate: .*unknown helper nope/);
  });
});

describe('validateTemplateSources', () => {
  it('accepts valid templates and skips absent fields', async () => {
    await expect(validateTemplateSources(template())).resolves.toBeUndefined();
    await expect(validateTemplateSources({ subject: 'Hi' })).resolves.toBeUndefined();
  });

  it.each([
    ['subject', '{{#if x}}'],
    ['htmlTemplate', '<p>{{name</p>'],
    ['textTemplate', '{{/each}}'],
    ['htmlTemplate', '{{unknownHelper arg}}'],
  ] as const)('rejects a %s that does not compile', async (field, source) => {
    let caught: unknown;
    try {
      await validateTemplateSources({ ...template(), [field]: source });
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
