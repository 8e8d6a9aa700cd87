import type { AppsService } from '../../apps/apps.service';
import type { App } from '../../apps/schemas/app.schema';
import type { ChatChannel } from '../chat-channels';
import type { ChatDestination, ChatDestinations } from './chat-destinations';

/** Apps and destinations looked up once per scan, however many notifications share them. */
export class ChatScan {
  private readonly apps = new Map<string, Promise<App | null>>();
  private readonly destinations = new Map<string, Promise<ChatDestination>>();

  constructor(
    private readonly resolver: ChatDestinations,
    private readonly appsService: AppsService,
  ) {}

  app(appId: string): Promise<App | null> {
    let found = this.apps.get(appId);
    if (!found) this.apps.set(appId, (found = this.appsService.findByAppId(appId)));
    return found;
  }

  destination(appId: string, channel: ChatChannel): Promise<ChatDestination> {
    const key = `${appId}\n${channel}`;
    let found = this.destinations.get(key);
    if (!found) this.destinations.set(key, (found = this.resolver.resolve(appId, channel)));
    return found;
  }
}
