import { type ChatMessage, payloadFor, renderText, webhookFormatOf } from './chat-message';

const ticket: ChatMessage = {
  appId: 'my-shop',
  appName: 'My Shop',
  channel: 'tickets',
  channelLabel: '#support',
  event: 'ticket.created',
  summary: 'New ticket',
  data: {
    ticketId: '65a1f0c2e4b0a1b2c3d4e5f6',
    subject: 'Broken item',
    email: 'jane@example.com',
    priority: 'high',
    topic: 'general',
    shop: null,
    excerpt: 'It arrived broken',
  },
};

describe('webhookFormatOf', () => {
  it.each([
    ['https://hooks.slack.com/services/T000/B000/XXXX', 'slack'],
    ['https://HOOKS.SLACK.COM./services/T000/B000/XXXX', 'slack'],
    ['https://discord.com/api/webhooks/123/abc', 'discord'],
    ['https://discordapp.com/api/webhooks/123/abc', 'discord'],
    ['https://ptb.discord.com/api/webhooks/123/abc', 'discord'],
    ['https://discord.com/channels/123', 'json'],
    ['https://hooks.slack.com.evil.example/services/x', 'json'],
    ['https://slack.com/api/chat.postMessage', 'json'],
    ['https://chat.example.com/hooks/abc', 'json'],
    ['http://127.0.0.1:8080/', 'json'],
  ])('%s → %s', (url, format) => {
    expect(webhookFormatOf(new URL(url))).toBe(format);
  });
});

describe('renderText', () => {
  it('shows the app, the channel label, the summary, the key fields and the excerpt', () => {
    expect(renderText(ticket, 'json')).toBe(
      'My Shop · #support · New ticket\n' +
        'subject: Broken item · email: jane@example.com · priority: high · topic: general\n' +
        '“It arrived broken”',
    );
  });

  it('leaves ids, times and empty fields out, and names camelCase keys in words', () => {
    const text = renderText(
      {
        ...ticket,
        summary: 'New newsletter signup',
        data: {
          contactId: 'x',
          email: 'ada@example.com',
          firstName: 'Ada',
          referralUrl: '',
          periodEndAt: 'y',
        },
      },
      'json',
    );
    expect(text).toBe('My Shop · #support · New newsletter signup\nemail: ada@example.com · first name: Ada');
  });

  it('escapes what people wrote so it cannot ping or format in Slack', () => {
    const text = renderText(
      { ...ticket, data: { subject: '<!channel> & <https://evil.example|click>' } },
      'slack',
    );
    expect(text).toContain('subject: &lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;');
    expect(text).not.toMatch(/[<>]/);
  });

  it('escapes Discord markdown', () => {
    const text = renderText(
      { ...ticket, appName: '# Shop', data: { subject: '**bold** [x](https://e.example)' } },
      'discord',
    );
    expect(text).toBe(
      '\\# Shop · #support · New ticket\nsubject: \\*\\*bold\\*\\* \\[x\\](https://e.example)',
    );
  });

  it('keeps each value on one line and within bounds, and the whole text within the format limit', () => {
    const long = renderText({ ...ticket, data: { subject: `a\n\nb ${'x'.repeat(1_000)}` } }, 'json');
    const subject = long.split('\n')[1];
    expect(subject.startsWith('subject: a b xx')).toBe(true);
    expect(subject.length).toBeLessThanOrEqual('subject: '.length + 300);
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`field${i}`, 'y'.repeat(200)]));
    expect(renderText({ ...ticket, data: many }, 'discord').length).toBeLessThanOrEqual(2_000);
  });
});

describe('payloadFor', () => {
  it('sends Slack {text}', () => {
    expect(payloadFor('slack', ticket)).toEqual({ text: renderText(ticket, 'slack') });
  });

  it('sends Discord {content} with mentions switched off', () => {
    expect(payloadFor('discord', ticket)).toEqual({
      content: renderText(ticket, 'discord'),
      allowed_mentions: { parse: [] },
    });
  });

  it('sends other webhooks {text, channel, appId, event, data}', () => {
    expect(payloadFor('json', ticket)).toEqual({
      text: renderText(ticket, 'json'),
      channel: 'tickets',
      appId: 'my-shop',
      event: 'ticket.created',
      data: ticket.data,
    });
  });
});
