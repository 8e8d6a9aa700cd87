import { textFromHtml } from '../../email/templates/template-engine';
import { CampaignRenderer, templateProblem } from './campaign-renderer';

const person = {
  firstName: 'Ada',
  lastName: null,
  email: 'ada@example.com',
  unsubscribeUrl: 'https://x.test/u/1',
};

describe('CampaignRenderer', () => {
  const content = {
    subject: 'Hi {{firstName}} & co',
    htmlContent:
      '<h1>Hi {{firstName}}</h1><a href="https://a.test/">A</a> <a href="{{unsubscribeUrl}}">U</a>',
    textContent: null,
  };

  it('renders variables, tracked links and the pixel; the text part keeps real URLs', async () => {
    const renderer = await CampaignRenderer.create(content, true);
    expect(renderer.links).toEqual(['https://a.test/']);
    const message = await renderer.render(person, {
      links: ['https://t.test/c/1'],
      open: 'https://t.test/o/1.gif',
    });
    expect(message.subject).toBe('Hi Ada & co');
    expect(message.html).toContain('<a href="https://t.test/c/1">A</a>');
    expect(message.html).toContain('<a href="https://x.test/u/1">U</a>');
    expect(message.html).toContain('<img src="https://t.test/o/1.gif"');
    expect(message.text).toContain('Hi Ada');
    expect(message.text).toContain('https://a.test/');
    expect(message.text).toContain('https://x.test/u/1');
  });

  it('escapes variables in the HTML, not in the text', async () => {
    const renderer = await CampaignRenderer.create(content, false);
    const message = await renderer.render({ ...person, firstName: '<b>' });
    expect(message.html).toContain('Hi &lt;b&gt;');
    expect(message.text).toContain('Hi <b>');
    expect(message.html).not.toContain('<img');
  });

  it('keeps the case of headings in generated text (Handlebars names survive)', () => {
    expect(textFromHtml('<h2>{{firstName}}</h2>')).toBe('{{firstName}}');
  });

  it('names the field that does not compile', async () => {
    expect(await templateProblem({ subject: 'ok', htmlContent: '{{#if}}' })).toMatch(/^htmlContent: /);
    expect(await templateProblem({ subject: 'ok', htmlContent: '<p>{{x}}</p>' })).toBeNull();
  });
});
