import {
  Body,
  Controller,
  Get,
  Injectable,
  Module,
  NotFoundException,
  Param,
  Post,
  Query,
} from '@nestjs/common';
import { InjectModel, MongooseModule, Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { IsInt, IsNotEmpty, IsOptional, IsString, Min } from 'class-validator';
import type { Model } from 'mongoose';
import { Public } from '../../src/common/auth/public.decorator';
import { ok, page } from '../../src/common/http/envelope';
import { RouteLimit } from '../../src/common/http/rate-limit';
import { findPage, PaginationQueryDto } from '../../src/common/pagination/pagination';

/**
 * Test-only routes that exercise the platform's error paths (validation, duplicate key, malformed id,
 * unexpected errors, throttling, pagination) through the real pipeline. Never part of AppModule.
 */
@Schema({ collection: 'probe_items' })
class ProbeItem {
  @Prop({ required: true, unique: true }) name: string;
}
const ProbeItemSchema = SchemaFactory.createForClass(ProbeItem);

class CreateProbeItemDto {
  @IsString() @IsNotEmpty() name: string;
  @IsOptional() @IsInt() @Min(0) count?: number;
}

@Injectable()
class ProbeService {
  constructor(@InjectModel(ProbeItem.name) readonly items: Model<ProbeItem>) {}
}

@Controller('__probe')
@Public()
class ProbeController {
  constructor(private readonly probe: ProbeService) {}

  @Post('items')
  async create(@Body() dto: CreateProbeItemDto) {
    const item = await this.probe.items.create({ name: dto.name });
    return ok(item.toObject());
  }

  @Get('items')
  async list(@Query() query: PaginationQueryDto) {
    const { items, pagination } = await findPage(this.probe.items, {
      filter: {},
      sort: { name: 1 },
      uniqueSort: true,
      page: query.page,
      limit: query.limit,
    });
    return page(items, pagination);
  }

  @Get('items/:id')
  async get(@Param('id') id: string) {
    const item = await this.probe.items.findById(id).lean();
    if (!item) throw new NotFoundException('Item not found');
    return ok(item);
  }

  @Get('boom')
  boom(): never {
    throw new Error('secret internal detail');
  }

  @Get('throttled')
  @RouteLimit(2)
  throttled() {
    return ok('fine');
  }
}

@Module({
  imports: [MongooseModule.forFeature([{ name: ProbeItem.name, schema: ProbeItemSchema }])],
  controllers: [ProbeController],
  providers: [ProbeService],
})
export class ProbeModule {}
