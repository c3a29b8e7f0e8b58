/** The code of every Servers page (one group of lazy chunks), loaded once. */
export const loadServersRoutes = () => import('./components/ServersRoutes');

/**
 * Starts loading the Servers pages' code now instead of when the route first
 * renders. An app calls it at start when the first URL is a Servers page: the
 * page's chunks then load beside the app's own and the sign-in, not after them
 * (on a new tab this takes one serial round of chunk fetches off the first
 * row). A failed load is left to the page's own, which tries again.
 *
 * @public
 */
export function preloadServersPage(): void {
  loadServersRoutes().catch(() => {});
}
