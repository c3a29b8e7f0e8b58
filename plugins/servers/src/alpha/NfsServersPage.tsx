import type { PageStart } from '../components/ServersPage/pageStart';
import { ServersPage } from '../components/ServersPage';
import { NfsPageFrame } from './NfsPageFrame';

/*
 * The pages of the new frontend system are a module each, so each page's loader
 * fetches that page's code alone (alpha.tsx).
 */

/**
 * The Servers page in the new frontend system; `start` holds the requests its
 * loader made (alpha.tsx).
 */
export function NfsServersPage(props: { start?: PageStart }) {
  return (
    <NfsPageFrame>
      <ServersPage start={props.start} />
    </NfsPageFrame>
  );
}
