import { Transform } from 'class-transformer';
import { IsInt, IsString, Matches, Max, Min, ValidateBy } from 'class-validator';
import { type EnvSection, toInt } from '../config/env-rules';

/** Sending domains: their DNS checks and what their records publish (docs/operations/sending-domains.md). */
export class SenderDomainsEnv {
  /**
   * DNS servers that check sender domains' records, `host:port` comma-separated (a local server in tests
   * and staging); unset: the system resolver.
   */
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string'
      ? value
          .split(',')
          .map((server) => server.trim())
          .filter(Boolean)
      : (value ?? []),
  )
  @ValidateBy({
    name: 'isDnsServerList',
    validator: {
      validate: (value: unknown) =>
        Array.isArray(value) &&
        value.every(
          (server) => typeof server === 'string' && /^(\[[0-9a-fA-F:.]+\]|[\w.-]+)(:\d{1,5})?$/.test(server),
        ),
      defaultMessage: () => 'must be host:port entries separated by commas, e.g. 127.0.0.1:5353',
    },
  })
  DNS_SERVERS: string[] = [];

  /** The SPF mechanism that authorises the outgoing servers, published in every sender domain's record. */
  @IsString()
  @Matches(/^(include|a|mx|ip4|ip6):?\S*$/, {
    message: 'must be one SPF mechanism, e.g. include:_spf.relay.example',
  })
  SENDING_SPF_INCLUDE = 'mx';

  /** How often the worker re-checks verified sender domains' records; 0 turns the re-check off. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(7 * 24 * 3_600_000)
  SENDER_DOMAIN_RECHECK_MS = 6 * 3_600_000;

  /**
   * Days a rotated-out DKIM key's record stays listed as needed once its successor signs: messages signed
   * with it may still be in queues or re-checked by receivers. Then the listing marks it removable.
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(365)
  DKIM_KEY_OVERLAP_DAYS = 7;
}

export const senderDomainsEnv: EnvSection<SenderDomainsEnv> = { schema: SenderDomainsEnv };
