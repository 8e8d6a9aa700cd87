import { ApiProperty } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsNotEmpty,
  IsString,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { TOPIC_KEY_PATTERN, TOPIC_NAME_MAX, TOPICS_MAX } from '../topic-rules';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class NewsletterTopicDto {
  @ApiProperty({ pattern: TOPIC_KEY_PATTERN.source, description: 'Stable key: what campaigns name' })
  @IsString()
  @Matches(TOPIC_KEY_PATTERN, {
    message: 'key must be 1 to 40 lower-case letters, digits or dashes, starting with a letter or digit',
  })
  key: string;

  @ApiProperty({ maxLength: TOPIC_NAME_MAX, description: 'What the preference page shows' })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(TOPIC_NAME_MAX)
  name: string;
}

/** The app's whole topic list, replacing the one before. */
export class PutNewsletterTopicsDto {
  @ApiProperty({ type: [NewsletterTopicDto], maxItems: TOPICS_MAX })
  @IsArray()
  @ArrayMaxSize(TOPICS_MAX)
  @ValidateNested({ each: true })
  @Type(() => NewsletterTopicDto)
  topics: NewsletterTopicDto[];
}

export class NewsletterTopicView {
  @ApiProperty() key: string;
  @ApiProperty() name: string;
}

export class NewsletterTopicsView {
  @ApiProperty({ type: [NewsletterTopicView] }) topics: NewsletterTopicView[];
}
