import '@backstage/cli/asset-types';
import ReactDOM from 'react-dom/client';
import { preloadServersPage } from '@rackside/plugin-servers/alpha';
import App from './App';
import '@backstage/ui/css/styles.css';

// Straight to a Servers page (a new tab, a bookmark): its code loads beside the
// app's and the sign-in instead of after them.
if (window.location.pathname.startsWith('/servers')) preloadServersPage();

ReactDOM.createRoot(document.getElementById('root')!).render(App.createRoot());
