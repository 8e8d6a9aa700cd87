/**
 * The e-mail providers' published webhook samples, copied from their documentation, with only the fields
 * that tie an event to a message replaced by the test's (ids, addresses, times where a check needs them
 * recent). Shared by test/provider-formats.e2e-spec.ts and bench/provider-webhooks.bench.ts.
 */

/** Who and what an event is about: the message the worker sent. */
export interface SampleTarget {
  /** Our Message-ID, `<job id>@<domain>` without angle brackets. */
  messageId: string;
  /** The provider's own id of the message, as its SMTP answer named it. */
  providerMessageId: string;
  to: string;
}

/* ------------------------------------------------------------------------------------------------ SES */
// Amazon SES Developer Guide, "Examples of Amazon SNS notifications for Amazon SES" and "Examples of event
// data that Amazon SES publishes to Amazon SNS".

function sesMail(target: SampleTarget, ourMessageId: string | null) {
  return {
    timestamp: '2016-01-27T14:59:38.237Z',
    source: 'john@example.com',
    sourceArn: 'arn:aws:ses:us-east-1:888888888888:identity/example.com',
    sourceIp: '127.0.3.0',
    sendingAccountId: '123456789012',
    callerIdentity: 'IAM_user_or_role_name',
    messageId: target.providerMessageId,
    destination: [target.to, 'mary@example.com', 'richard@example.com'],
    headersTruncated: false,
    headers: [
      { name: 'From', value: '"John Doe" <john@example.com>' },
      { name: 'To', value: `"Jane Doe" <${target.to}>, "Mary Doe" <mary@example.com>` },
      { name: 'Message-ID', value: ourMessageId ?? 'custom-message-ID' },
      { name: 'Subject', value: 'Hello' },
      { name: 'Content-Type', value: 'text/plain; charset="UTF-8"' },
      { name: 'Content-Transfer-Encoding', value: 'base64' },
      { name: 'Date', value: 'Wed, 27 Jan 2016 14:05:45 +0000' },
    ],
    commonHeaders: {
      from: ['John Doe <john@example.com>'],
      date: 'Wed, 27 Jan 2016 14:05:45 +0000',
      to: [`Jane Doe <${target.to}>, Mary Doe <mary@example.com>, Richard Doe <richard@example.com>`],
      // The sample's "custom-message-ID": the Message-ID header the sender gave the message.
      messageId: ourMessageId ?? 'custom-message-ID',
      subject: 'Hello',
    },
  };
}

/**
 * A notification with our Message-ID in `commonHeaders` (null: the sample's own, so only SES's id matches).
 */
export const sesSamples = (target: SampleTarget, ours: string | null = `<${target.messageId}>`) => ({
  bounce: {
    notificationType: 'Bounce',
    bounce: {
      bounceType: 'Permanent',
      reportingMTA: 'dns; email.example.com',
      bouncedRecipients: [
        {
          emailAddress: target.to,
          status: '5.1.1',
          action: 'failed',
          diagnosticCode: `smtp; 550 5.1.1 <${target.to}>... User`,
        },
      ],
      bounceSubType: 'General',
      timestamp: '2016-01-27T14:59:38.237Z',
      feedbackId: '00000138111222aa-33322211-cccc-cccc-cccc-ddddaaaa068a-000000',
      remoteMtaIp: '127.0.2.0',
    },
    mail: sesMail(target, ours),
  },
  transientBounce: {
    notificationType: 'Bounce',
    bounce: {
      bounceType: 'Transient',
      bounceSubType: 'MailboxFull',
      bouncedRecipients: [{ emailAddress: target.to, status: '4.2.2', action: 'failed' }],
      timestamp: '2016-01-27T14:59:38.237Z',
      feedbackId: '00000138111222aa-33322211-cccc-cccc-cccc-ddddaaaa068b-000000',
    },
    mail: sesMail(target, ours),
  },
  complaint: {
    notificationType: 'Complaint',
    complaint: {
      userAgent: 'AnyCompany Feedback Loop (V0.01)',
      complainedRecipients: [{ emailAddress: target.to }],
      complaintFeedbackType: 'abuse',
      arrivalDate: '2016-01-27T14:59:38.237Z',
      timestamp: '2016-01-27T14:59:38.237Z',
      feedbackId: '000001378603177f-18c07c78-fa81-4a58-9dd1-fedc3cb8f49a-000000',
    },
    mail: sesMail(target, ours),
  },
  delivery: {
    notificationType: 'Delivery',
    mail: sesMail(target, ours),
    delivery: {
      timestamp: '2016-01-27T14:59:38.237Z',
      recipients: [target.to],
      processingTimeMillis: 546,
      reportingMTA: 'a8-70.smtp-out.amazonses.com',
      smtpResponse: '250 ok:  Message 64111812 accepted',
      remoteMtaIp: '127.0.2.0',
    },
  },
  // Event publishing: `eventType` instead of `notificationType`.
  open: {
    eventType: 'Open',
    mail: sesMail(target, ours),
    open: {
      ipAddress: '192.0.2.1',
      timestamp: '2017-08-09T22:00:24.044Z',
      userAgent:
        'Mozilla/5.0 (iPhone; CPU iPhone OS 10_3_3 like Mac OS X) AppleWebKit/603.3.8 (KHTML, like Gecko) Mobile/14G60',
    },
  },
  click: {
    eventType: 'Click',
    mail: sesMail(target, ours),
    click: {
      ipAddress: '192.0.2.1',
      link: 'http://docs.aws.amazon.com/ses/latest/DeveloperGuide/send-email-smtp.html',
      linkTags: { samplekey0: ['samplevalue0'] },
      timestamp: '2017-08-09T23:51:25.570Z',
      userAgent:
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/60.0.3112.90 Safari/537.36',
    },
  },
  rendering: {
    eventType: 'Rendering Failure',
    mail: sesMail(target, ours),
    failure: {
      errorMessage: "Attribute 'attributeName' is not present in the rendering data.",
      templateName: 'MyTemplate',
    },
  },
});

/* ------------------------------------------------------------------------------------------- SendGrid */
// Twilio SendGrid, "Event Webhook Reference": one request is an array of these.

export const sendGridSamples = (target: SampleTarget) => {
  const common = {
    email: target.to,
    timestamp: 1513299569,
    'smtp-id': `<${target.messageId}>`,
    category: 'cat facts',
    sg_message_id: `${target.providerMessageId}.filterdrecv-p3las1-5bf99c48d-4n5nz-18-5C3E5C4A-2D.0`,
  };
  // Open and click events carry no smtp-id.
  const { 'smtp-id': _omitted, ...engagement } = common;
  const userAgent = 'Mozilla/4.0 (compatible; MSIE 6.1; Windows XP; .NET CLR 1.1.4322; .NET CLR 2.0.50727)';
  return {
    processed: { ...common, event: 'processed', sg_event_id: 'rbtnWrG1DVDGGGFHFyun0A==' },
    deferred: {
      ...common,
      event: 'deferred',
      sg_event_id: 'uTpAladEvbUf4edikd-F6w==',
      response: '400 try again later',
      attempt: '5',
    },
    delivered: { ...common, event: 'delivered', sg_event_id: 'JldC9f3XVTlK_oXSX9Iuyw==', response: '250 OK' },
    open: {
      ...engagement,
      event: 'open',
      sg_event_id: 'sVYXwbMSjQ-AQiB1PbVTuA==',
      useragent: userAgent,
      ip: '255.255.255.255',
    },
    click: {
      ...engagement,
      event: 'click',
      sg_event_id: 'eFe_0k9upCYj98UwEfsk0Q==',
      useragent: userAgent,
      ip: '255.255.255.255',
      url: 'http://www.sendgrid.com/',
    },
    bounce: {
      ...common,
      event: 'bounce',
      sg_event_id: 'FK-n1QbmSGuPRSGTOoNv8w==',
      reason: '500 unknown recipient',
      status: '5.0.0',
      type: 'bounce',
    },
    blocked: {
      ...common,
      event: 'bounce',
      sg_event_id: 'rJM4bRK1RcyD-L1Dm6nTjg==',
      reason: '550 blocked by recipient policy',
      status: '5.7.1',
      type: 'blocked',
    },
    dropped: {
      ...common,
      event: 'dropped',
      sg_event_id: 'zmzJhfJgAfUSOW80yEbPyw==',
      reason: 'Bounced Address',
      status: '5.0.0',
    },
    spamreport: { ...common, event: 'spamreport', sg_event_id: '37nvH5QBz858KGVYCM4uOA==' },
    unsubscribe: { ...common, event: 'unsubscribe', sg_event_id: 'qXr2D7Atr2LGD35RwBy8gA==' },
  };
};

/* ------------------------------------------------------------------------------------------- Postmark */
// Postmark developer documentation, "Bounce webhook", "Spam complaint webhook", "Delivery webhook", "Open
// tracking webhook", "Click webhook". `Metadata` carries what the worker adds (X-PM-Metadata-app_message_id).

export const postmarkSamples = (target: SampleTarget, metadata: Record<string, string> = {}) => ({
  bounce: {
    RecordType: 'Bounce',
    MessageStream: 'outbound',
    ID: 42,
    Type: 'HardBounce',
    TypeCode: 1,
    Name: 'Hard bounce',
    Tag: 'Test',
    MessageID: target.providerMessageId,
    Metadata: { a_key: 'a_value', b_key: 'b_value', ...metadata },
    ServerID: 23,
    Description: 'The server was unable to deliver your message (ex: unknown user, mailbox not found).',
    Details: 'Test bounce details',
    Email: target.to,
    From: 'sender@example.com',
    BouncedAt: '2019-11-05T16:33:54.9070259Z',
    DumpAvailable: true,
    Inactive: true,
    CanActivate: true,
    Subject: 'Test subject',
    Content: '<Full dump of bounce>',
  },
  softBounce: {
    RecordType: 'Bounce',
    MessageStream: 'outbound',
    ID: 43,
    Type: 'SoftBounce',
    TypeCode: 4096,
    Name: 'Soft bounce/Undeliverable',
    Tag: 'Test',
    MessageID: target.providerMessageId,
    Metadata: { a_key: 'a_value', b_key: 'b_value', ...metadata },
    ServerID: 23,
    Description: 'Unable to temporarily deliver this email.',
    Details: 'Test bounce details',
    Email: target.to,
    From: 'sender@example.com',
    BouncedAt: '2019-11-05T16:33:54.9070259Z',
    DumpAvailable: true,
    Inactive: false,
    CanActivate: true,
    Subject: 'Test subject',
  },
  spamComplaint: {
    RecordType: 'SpamComplaint',
    MessageStream: 'outbound',
    ID: 42,
    Type: 'SpamComplaint',
    TypeCode: 100001,
    Name: 'Spam complaint',
    Tag: 'Test',
    MessageID: target.providerMessageId,
    Metadata: { a_key: 'a_value', b_key: 'b_value', ...metadata },
    ServerID: 1234,
    Description: '',
    Details: 'Test spam complaint details',
    Email: target.to,
    From: 'sender@example.com',
    BouncedAt: '2019-11-05T16:33:54.9070259Z',
    DumpAvailable: true,
    Inactive: true,
    CanActivate: false,
    Subject: 'Test subject',
    Content: '<Abuse report dump>',
  },
  delivery: {
    RecordType: 'Delivery',
    ServerID: 23,
    MessageStream: 'outbound',
    MessageID: target.providerMessageId,
    Recipient: target.to,
    Tag: 'welcome-email',
    DeliveredAt: '2021-02-21T16:34:52Z',
    Details: 'Test delivery webhook details',
    Metadata: { a_key: 'a_value', b_key: 'b_value', ...metadata },
  },
  open: {
    RecordType: 'Open',
    MessageStream: 'outbound',
    FirstOpen: true,
    Client: { Name: 'Chrome 35.0.1916.153', Company: 'Google', Family: 'Chrome' },
    OS: { Name: 'OS X 10.7 Lion', Company: 'Apple Computer, Inc.', Family: 'OS X 10' },
    Platform: 'WebMail',
    UserAgent:
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_7_5) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/35.0.1916.153 Safari/537.36',
    ReadSeconds: 5,
    Geo: {
      CountryISOCode: 'RS',
      Country: 'Serbia',
      RegionISOCode: 'VO',
      Region: 'Autonomna Pokrajina Vojvodina',
      City: 'Novi Sad',
      Zip: '21000',
      Coords: '45.2517,19.8369',
      IP: '188.2.95.4',
    },
    MessageID: target.providerMessageId,
    Metadata: { a_key: 'a_value', b_key: 'b_value', ...metadata },
    ReceivedAt: '2019-11-05T16:33:54.9070259Z',
    Tag: 'welcome-email',
    Recipient: target.to,
  },
  click: {
    RecordType: 'Click',
    MessageStream: 'outbound',
    ClickLocation: 'HTML',
    Client: { Name: 'Chrome 35.0.1916.153', Company: 'Google', Family: 'Chrome' },
    OS: { Name: 'OS X 10.7 Lion', Company: 'Apple Computer, Inc.', Family: 'OS X 10' },
    Platform: 'Desktop',
    UserAgent:
      'Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/39.0.2171.95 Safari/537.36',
    OriginalLink: 'https://example.com',
    Geo: {
      CountryISOCode: 'RS',
      Country: 'Serbia',
      RegionISOCode: 'VO',
      Region: 'Autonomna Pokrajina Vojvodina',
      City: 'Novi Sad',
      Zip: '21000',
      Coords: '45.2517,19.8369',
      IP: '8.8.8.8',
    },
    MessageID: target.providerMessageId,
    Metadata: { a_key: 'a_value', b_key: 'b_value', ...metadata },
    ReceivedAt: '2017-10-25T15:21:11.0000000Z',
    Tag: 'welcome-email',
    Recipient: target.to,
  },
  subscriptionChange: {
    RecordType: 'SubscriptionChange',
    MessageID: target.providerMessageId,
    ServerID: 23,
    MessageStream: 'outbound',
    ChangedAt: '2020-02-01T10:53:34.416071Z',
    Recipient: target.to,
    Origin: 'Recipient',
    SuppressSending: true,
    SuppressionReason: 'HardBounce',
    Tag: 'my-tag',
    Metadata: { a_key: 'a_value', b_key: 'b_value', ...metadata },
  },
});

/* -------------------------------------------------------------------------------------------- Mailgun */
// Mailgun documentation, "Webhooks" (payload samples of each event); `signature` is filled in by the test.

const mailgunMessage = (target: SampleTarget, subject: string) => ({
  headers: {
    to: `Alice <${target.to}>`,
    // Mailgun names the Message-ID header it received, without angle brackets.
    'message-id': target.messageId,
    from: 'Bob <bob@sandbox.mailgun.org>',
    subject,
  },
  attachments: [],
  size: 111,
});

const mailgunCommon = (target: SampleTarget) => ({
  recipient: target.to,
  'recipient-domain': target.to.split('@')[1],
  campaigns: [],
  tags: ['my_tag_1', 'my_tag_2'],
  'user-variables': { my_var_1: 'Mailgun Variable #1', 'my-var-2': 'awesome' },
});

export const mailgunEventData = (target: SampleTarget) => ({
  delivered: {
    event: 'delivered',
    timestamp: 1529006854.329574,
    id: 'DACSsAdVSeGpLid7TN03WA',
    'log-level': 'info',
    envelope: {
      transport: 'smtp',
      sender: 'bob@sandbox.mailgun.org',
      'sending-ip': '209.61.154.250',
      targets: target.to,
    },
    flags: { 'is-routed': false, 'is-authenticated': true, 'is-system-test': false, 'is-test-mode': false },
    'delivery-status': {
      tls: true,
      'mx-host': 'smtp-in.example.com',
      'attempt-no': 1,
      description: '',
      'session-seconds': 0.4331989288330078,
      utf8: true,
      code: 250,
      message: 'OK',
      'certificate-verified': true,
    },
    message: mailgunMessage(target, 'Test delivered webhook'),
    ...mailgunCommon(target),
  },
  permanentFail: {
    event: 'failed',
    timestamp: 1529701969.818328,
    id: 'G9Bn5sl1TC6bIcR1CqSf9g',
    'log-level': 'error',
    severity: 'permanent',
    reason: 'suppress-bounce',
    envelope: { sender: 'bob@sandbox.mailgun.org', transport: 'smtp', targets: target.to },
    flags: { 'is-routed': false, 'is-authenticated': true, 'is-system-test': false, 'is-test-mode': false },
    'delivery-status': {
      'attempt-no': 1,
      message: '',
      code: 605,
      description: 'Not delivering to previously bounced address',
      'session-seconds': 0,
    },
    message: mailgunMessage(target, 'Test permanent_fail webhook'),
    ...mailgunCommon(target),
  },
  temporaryFail: {
    event: 'failed',
    timestamp: 1521233123.501324,
    id: 'Fs7-5t81S2ms-j9S8rvCJw',
    'log-level': 'warn',
    severity: 'temporary',
    reason: 'generic',
    envelope: { sender: 'bob@sandbox.mailgun.org', transport: 'smtp', targets: target.to },
    flags: { 'is-routed': false, 'is-authenticated': true, 'is-system-test': false, 'is-test-mode': false },
    'delivery-status': {
      'attempt-no': 1,
      message: '452 4.2.2 The email account that you tried to reach is over quota.',
      code: 452,
      description: '',
      'session-seconds': 0.2,
      'retry-seconds': 600,
    },
    message: mailgunMessage(target, 'Test temporary_fail webhook'),
    ...mailgunCommon(target),
  },
  complained: {
    event: 'complained',
    timestamp: 1529703058.741327,
    id: '-Agny091SquKnsrW2NEKUA',
    'log-level': 'warn',
    envelope: { 'sending-ip': '173.193.210.33' },
    flags: { 'is-test-mode': false },
    message: mailgunMessage(target, 'Test complained webhook'),
    ...mailgunCommon(target),
  },
  opened: {
    event: 'opened',
    timestamp: 1529703061.419845,
    id: 'Ase7i2zsRYeDXztHGENqRA',
    'log-level': 'info',
    geolocation: { country: 'US', region: 'CA', city: 'San Francisco' },
    ip: '50.56.129.169',
    'client-info': {
      'client-type': 'browser',
      'client-os': 'Linux',
      'device-type': 'desktop',
      'client-name': 'Chrome',
      'user-agent':
        'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/67.0.3396.99 Safari/537.36',
    },
    message: { headers: { 'message-id': target.messageId } },
    ...mailgunCommon(target),
  },
  clicked: {
    event: 'clicked',
    timestamp: 1529703062.1216,
    id: 'Ase7i2zsRYeDXztHGENqRB',
    'log-level': 'info',
    url: 'https://documentation.mailgun.com/en/latest/',
    geolocation: { country: 'US', region: 'CA', city: 'San Francisco' },
    ip: '50.56.129.169',
    'client-info': {
      'client-type': 'browser',
      'client-os': 'Linux',
      'device-type': 'desktop',
      'client-name': 'Chrome',
      'user-agent':
        'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/67.0.3396.99 Safari/537.36',
    },
    message: { headers: { 'message-id': target.messageId } },
    ...mailgunCommon(target),
  },
  unsubscribed: {
    event: 'unsubscribed',
    timestamp: 1529703064.5893,
    id: 'Ase7i2zsRYeDXztHGENqRC',
    'log-level': 'info',
    ip: '50.56.129.169',
    message: { headers: { 'message-id': target.messageId } },
    ...mailgunCommon(target),
  },
});
