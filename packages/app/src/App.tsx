import { createApp } from '@backstage/frontend-defaults';
import catalogPlugin from '@backstage/plugin-catalog/alpha';
import notificationsPlugin from '@backstage/plugin-notifications/alpha';
import orgPlugin from '@backstage/plugin-org/alpha';
import signalsPlugin from '@backstage/plugin-signals/alpha';
import userSettingsPlugin from '@backstage/plugin-user-settings/alpha';
import serversPlugin from '@rackside/plugin-servers/alpha';
import { navModule } from './modules/nav';

export default createApp({
  features: [
    catalogPlugin,
    orgPlugin,
    notificationsPlugin,
    signalsPlugin,
    userSettingsPlugin,
    serversPlugin,
    navModule,
  ],
});
